"""A bounded load test: 8 clients x 50 questions over 10 workspaces, plus a notification flood.

One real `live-memory serve` subprocess in serial mode (so each workspace's history must hold
every question and answer), a fake model answering after 50-150 ms, and 10 real directories.
Eight client threads ask round-robin over the workspaces while another thread floods
`/notify` with batches until the questions are done. It prints throughput, question and
notify latency (p50/p99), errors, the server's RSS before and after, and checks that every
Q/A was kept (sum of messages_retained == 2 x questions). Exits 1 on any error or shortfall.

Bounded: a fixed number of questions, at most NOTIFY_MAX notify requests, and a wall-clock
deadline after which every thread stops and the run fails.

    .venv/bin/python bench/load_test.py
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import _repo_root  # noqa: F401 (puts the repository root on sys.path for tests.support)
import httpx

from tests.support.fakes import FakeProvider, Recorded, Reply, Text
from tests.support.server_process import ServerProcess

CLIENTS = 8
QUESTIONS_PER_CLIENT = 50
WORKSPACES = 10
REPLY_DELAY_S = (0.05, 0.15)
NOTIFY_MAX = 5000
NOTIFY_EVENTS_PER_BATCH = 5
DEADLINE_S = 180.0
REQUEST_TIMEOUT_S = 60.0
SEED = 7

FILES = {
    "src/app.py": "def answer():\n    return 42\n",
    "src/util/strings.py": "def shout(text):\n    return text.upper()\n",
    "README.md": "# demo\nA tiny project.\n",
}


@dataclass
class Tally:
    """What the threads measured; appended under `lock`."""

    question_s: list[float] = field(default_factory=list)
    notify_s: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, into: list[float], seconds: float) -> None:
        with self.lock:
            into.append(seconds)

    def fail(self, message: str) -> None:
        with self.lock:
            if len(self.errors) < 1000:
                self.errors.append(message)


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text(encoding="utf-8").splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(int(q * len(ordered)), len(ordered) - 1)] if ordered else float("nan")


def _workspaces(base: Path) -> list[Path]:
    roots = []
    for i in range(WORKSPACES):
        root = base / f"project-{i:02d}"
        for rel, text in FILES.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        roots.append(root)
    return roots


def _responder() -> Callable[[Recorded], Reply]:
    rng = random.Random(SEED)  # the fake answers on one event-loop thread

    def reply(recorded: Recorded) -> Reply:
        return Text(
            "app.py defines answer(), which returns 42.", delay_s=rng.uniform(*REPLY_DELAY_S)
        )

    return reply


def _asker(
    url: str, roots: list[Path], client_id: int, tally: Tally, *, deadline: float, round_no: int
) -> None:
    with httpx.Client(base_url=url, timeout=REQUEST_TIMEOUT_S) as client:
        for j in range(QUESTIONS_PER_CLIENT):
            if time.monotonic() > deadline:
                tally.fail(f"client {client_id}: deadline reached after {j} questions")
                return
            root = roots[(client_id + j) % len(roots)]
            body = {
                "question": f"round {round_no} client {client_id} question {j}: what is answer()?",
                "cwd": str(root),
            }
            started = time.perf_counter()
            try:
                response = client.post("/api/ask", json=body)
            except httpx.HTTPError as exc:
                tally.fail(f"client {client_id} question {j}: {exc!r}")
                continue
            if response.status_code != 200:
                tally.fail(
                    f"client {client_id} question {j}: {response.status_code} {response.text}"
                )
                continue
            tally.add(tally.question_s, time.perf_counter() - started)


def _flood(
    url: str, roots: list[Path], tally: Tally, done: threading.Event, deadline: float
) -> int:
    rng = random.Random(SEED + 1)
    sent = 0
    paths = list(FILES)
    with httpx.Client(base_url=url, timeout=REQUEST_TIMEOUT_S) as client:
        while not done.is_set() and sent < NOTIFY_MAX and time.monotonic() < deadline:
            root = rng.choice(roots)
            events = []
            for _ in range(NOTIFY_EVENTS_PER_BATCH):
                rel = rng.choice(paths)
                if rng.random() < 0.5:
                    events.append({"path": rel, "kind": "read", "content": FILES[rel]})
                else:
                    events.append({"path": rel, "kind": "change"})
            started = time.perf_counter()
            try:
                response = client.post("/notify", json={"cwd": str(root), "events": events})
            except httpx.HTTPError as exc:
                tally.fail(f"notify: {exc!r}")
                continue
            finally:
                sent += 1
            if response.status_code != 200:
                tally.fail(f"notify: {response.status_code} {response.text}")
                continue
            tally.add(tally.notify_s, time.perf_counter() - started)
    return sent


def _round(url: str, roots: list[Path], round_no: int) -> tuple[float, Tally, int]:
    """One round of questions and flood: (elapsed seconds, measurements, notify sent)."""
    tally = Tally()
    deadline = time.monotonic() + DEADLINE_S
    done = threading.Event()
    flood_sent: list[int] = []
    flooder = threading.Thread(
        target=lambda: flood_sent.append(_flood(url, roots, tally, done, deadline))
    )
    askers = [
        threading.Thread(
            target=_asker,
            args=(url, roots, i, tally),
            kwargs={"deadline": deadline, "round_no": round_no},
        )
        for i in range(CLIENTS)
    ]
    started = time.perf_counter()
    flooder.start()
    for thread in askers:
        thread.start()
    for thread in askers:
        thread.join(timeout=DEADLINE_S + REQUEST_TIMEOUT_S)
    elapsed = time.perf_counter() - started
    done.set()
    flooder.join(timeout=REQUEST_TIMEOUT_S)
    if any(thread.is_alive() for thread in [*askers, flooder]):
        tally.fail("a client thread did not stop in time")
    return elapsed, tally, sum(flood_sent)


def _report(round_no: int, elapsed: float, tally: Tally, sent: int) -> None:
    answered, questions = len(tally.question_s), CLIENTS * QUESTIONS_PER_CLIENT
    print(
        f"round {round_no}: questions {answered}/{questions} in {elapsed:.2f} s = "
        f"{answered / elapsed:.1f} q/s; p50 {1000 * _pct(tally.question_s, 0.50):.0f} ms, "
        f"p99 {1000 * _pct(tally.question_s, 0.99):.0f} ms"
    )
    print(
        f"round {round_no}: notify {len(tally.notify_s)}/{sent} batches of "
        f"{NOTIFY_EVENTS_PER_BATCH} events; p50 {1000 * _pct(tally.notify_s, 0.50):.1f} ms, "
        f"p99 {1000 * _pct(tally.notify_s, 0.99):.1f} ms; errors {len(tally.errors)}"
    )
    for error in tally.errors[:10]:
        print(f"  {error}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--rounds", type=int, default=1, help="repeat the load (RSS after each shows drift)"
    )
    rounds = max(1, parser.parse_args(argv).rounds)
    base = Path(tempfile.mkdtemp(prefix="lm-load-"))
    roots = _workspaces(base / "workspaces")
    questions = CLIENTS * QUESTIONS_PER_CLIENT
    errors = 0
    answered = 0
    print(
        f"load: {CLIENTS} clients x {QUESTIONS_PER_CLIENT} questions over {WORKSPACES} "
        f"workspaces x {rounds} round(s), serial mode, notify flood, fake model "
        f"{REPLY_DELAY_S[0] * 1000:.0f}-{REPLY_DELAY_S[1] * 1000:.0f} ms"
    )
    with FakeProvider() as fake:
        fake.responder = _responder()
        env = {
            "ANTHROPIC_API_KEY": "dummy-key",
            "ANTHROPIC_BASE_URL": fake.anthropic_base_url,
            "LIVE_MEMORY_CONCURRENCY": "serial",
            "LIVE_MEMORY_LOG_LEVEL": "warning",
        }
        with ServerProcess(base / "data", env) as server:
            assert server.proc is not None
            pid = server.proc.pid
            for root in roots:  # activate and warm each workspace (held content: no cold guard)
                events = [{"path": p, "kind": "read", "content": t} for p, t in FILES.items()]
                # A notification alone creates no workspace; a clear does, model-free.
                httpx.post(f"{server.url}/clear", json={"cwd": str(root)}, timeout=30)
                httpx.post(
                    f"{server.url}/notify", json={"cwd": str(root), "events": events}, timeout=30
                ).raise_for_status()
            rss = [_rss_kib(pid)]
            for round_no in range(1, rounds + 1):
                elapsed, tally, sent = _round(server.url, roots, round_no)
                rss.append(_rss_kib(pid))
                _report(round_no, elapsed, tally, sent)
                errors += len(tally.errors)
                answered += len(tally.question_s)
            retained = sum(
                int(
                    httpx.get(f"{server.url}/stats", params={"cwd": str(root)}, timeout=30).json()[
                        "messages_retained"
                    ]
                )
                for root in roots
            )
            model_calls = len(fake.requests)
    steps = ", ".join(f"{kib / 1024:.1f}" for kib in rss[1:])
    print(
        f"server RSS (MiB): before {rss[0] / 1024:.1f}, after each round {steps} "
        f"({(rss[-1] - rss[0]) / 1024:+.1f} overall)"
    )
    expected = 2 * questions * rounds
    print(f"model calls {model_calls}; messages retained {retained} (expected {expected})")
    print(f"errors: {errors}")
    ok = errors == 0 and answered == questions * rounds and retained == expected
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
