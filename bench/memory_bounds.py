"""Memory bounds of one workspace (issue 12): held bytes, budget accuracy, planning, notify log.

Prints, against a real `live-memory serve` and the scripted fake provider over HTTP:

1. the server's RSS before and after 2,000 teed reads of 96 KB, and after a notify flood of
   2,000 x 200 KB (target: growth under 30 MB, held bytes at the cap);
2. the budget estimate (`/stats` used_tokens just before each question) against the prompt
   tokens the provider counted for that question ("billed"; "sent" is its text / 4), over 20
   questions with a 180 KB file edited between them (target: within 15 %); with
   LIVE_MEMORY_BENCH_REPO=/path/to/a/checkout also the first question on that tree, whose
   prompt carries its directory tree and core map (read only: nothing there is written);
3. compaction planning time (`evict_manifest_lru`) at 5,000 and 10,000 manifest files, in
   process (target: under 50 ms at 10,000);
4. the workspace's `notify_log` length while questions overlap and notifications keep coming,
   for `--overlap-s` seconds (default 60; target: bounded by the forks in flight). This part
   runs the service in process, to read the actor's log;
5. distinct-path floods into one git workspace (issue 31): 6,000 teed reads of 96 KB, each a
   different file on disk (target: RSS growth under 60 MB, `/stats` under 1 s), then 20,000
   small distinct paths (target: the window fill under the compaction threshold, and the
   next question's prompt within the window), then 3,000 distinct 96 KB reads from 8
   concurrent hooks, faster than the workspace applies them (target: the same growth, and
   `/stats` right after under 1 s).

    .venv/bin/python bench/memory_bounds.py [--overlap-s 60] [--skip rss,budget,plan,log,flood]

The machine is shared: run it once or twice and read the figures as indicative.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import _repo_root  # noqa: F401 (puts the repository root on sys.path for tests.support)
import httpx
import pykka
from _proc import rss_mb

from live_memory.config import load_settings
from live_memory.gateway import LiveMemoryService
from live_memory.memory.compaction import Watermarks, evict_manifest_lru
from live_memory.memory.window import Window
from tests.support.fakes import FakeProvider, Text
from tests.support.repo import make_repo
from tests.support.server_process import ServerProcess

TEED_READS, TEED_BYTES = 2000, 96 * 1024
FLOOD_EVENTS, FLOOD_BYTES, FLOOD_BATCH = 2000, 200 * 1024, 10
QUESTIONS, BIG_FILE_BYTES = 20, 180 * 1024
DISTINCT_READS, DISTINCT_BYTES = 6000, 96 * 1024
SMALL_PATHS, SMALL_BYTES, SMALL_BATCH = 20_000, 200, 50
CONCURRENT_READS, CONCURRENT_HOOKS = 3000, 8
CHARS_PER_TOKEN = 4.0


def _body(tag: str, size: int) -> str:
    """Plain source-like text of about `size` characters, distinct per `tag`."""
    line = f"def handler_{tag}_{{}}(value):\n    return value + {{}}\n"
    parts, total, i = [], 0, 0
    while total < size:
        text = line.format(i, i)
        parts.append(text)
        total += len(text)
        i += 1
    return "".join(parts)[:size]


def _stats(client: httpx.Client, url: str, cwd: Path) -> dict[str, Any]:
    reply = client.get(f"{url}/stats", params={"cwd": str(cwd)})
    reply.raise_for_status()
    body: dict[str, Any] = reply.json()
    return body


def _held(stats: dict[str, Any]) -> str:
    files = stats["file_contexts"]
    held = files.get("held_bytes")
    shown = f"{held / 1024:,.0f} KB held" if isinstance(held, int) else "held bytes not reported"
    return (
        f"{files['loaded']} files known, {files['with_content']} with content, {shown}; "
        f"fill {stats['context']['fill_pct']} %"
    )


def _post(client: httpx.Client, url: str, cwd: Path, events: list[dict[str, Any]]) -> None:
    client.post(f"{url}/notify", json={"cwd": str(cwd), "events": events}).raise_for_status()


def rss_section(tmp: Path, fake: FakeProvider, env: dict[str, str]) -> None:
    reads, flood = tmp / "reads", tmp / "flood"
    for root in (reads, flood):
        (root / "src").mkdir(parents=True)
    with ServerProcess(tmp / "data-rss", env) as server, httpx.Client(timeout=60) as client:
        assert server.proc is not None
        pid = server.proc.pid
        for root in (reads, flood):  # activate both workspaces before the baseline (a
            # notification alone creates no workspace; a clear does, without a model call)
            client.post(f"{server.url}/clear", json={"cwd": str(root)}).raise_for_status()
        before = rss_mb(pid)
        print(f"RSS before: {before:.1f} MB")
        start = time.perf_counter()
        for i in range(TEED_READS):
            content = _body(f"r{i}", TEED_BYTES)
            _post(
                client,
                server.url,
                reads,
                [{"path": f"src/r{i}.py", "kind": "read", "content": content}],
            )
        after_reads = rss_mb(pid)
        print(
            f"after {TEED_READS} teed reads of {TEED_BYTES // 1024} KB "
            f"({time.perf_counter() - start:.1f} s): RSS {after_reads:.1f} MB "
            f"({after_reads - before:+.1f} MB); {_held(_stats(client, server.url, reads))}"
        )
        start = time.perf_counter()
        for i in range(0, FLOOD_EVENTS, FLOOD_BATCH):
            events = [
                {"path": f"src/f{j}.py", "kind": "write", "content": _body(f"f{j}", FLOOD_BYTES)}
                for j in range(i, i + FLOOD_BATCH)
            ]
            _post(client, server.url, flood, events)
        after_flood = rss_mb(pid)
        print(
            f"after a notify flood of {FLOOD_EVENTS} x {FLOOD_BYTES // 1024} KB "
            f"({time.perf_counter() - start:.1f} s): RSS {after_flood:.1f} MB "
            f"({after_flood - before:+.1f} MB from the start); "
            f"{_held(_stats(client, server.url, flood))}"
        )


def _timed_stats(client: httpx.Client, url: str, cwd: Path) -> tuple[dict[str, Any] | None, float]:
    """/stats and how long it took (None: it did not answer 200)."""
    started = time.perf_counter()
    reply = client.get(f"{url}/stats", params={"cwd": str(cwd)})
    took = time.perf_counter() - started
    return (reply.json() if reply.status_code == 200 else None), took


def _fill(stats: dict[str, Any] | None) -> str:
    if stats is None:
        return "/stats did not answer"
    context = stats["context"]
    return f"{_held(stats)} ({context['used_tokens']:,} of {context['max_tokens']:,} tokens)"


def flood_section(tmp: Path, fake: FakeProvider, env: dict[str, str]) -> None:
    reads = make_repo(tmp / "distinct", {"README.md": "# flood\n"})
    paths = make_repo(tmp / "paths", {"README.md": "# flood\n"})
    with ServerProcess(tmp / "data-flood", env) as server, httpx.Client(timeout=60) as client:
        assert server.proc is not None
        pid = server.proc.pid
        for root in (reads, paths):  # a clear activates the workspace without a model call
            client.post(f"{server.url}/clear", json={"cwd": str(root)}).raise_for_status()
        before = rss_mb(pid)
        print(f"RSS before: {before:.1f} MB")
        start = time.perf_counter()
        for i in range(DISTINCT_READS):
            path = reads / "src" / f"pkg{i % 60}" / f"module_{i}.py"
            path.parent.mkdir(parents=True, exist_ok=True)
            content = _body(f"d{i}", DISTINCT_BYTES)
            path.write_text(content, encoding="utf-8")  # a real session reads real files
            event = {"path": str(path), "kind": "read", "content": content}
            _post(client, server.url, reads, [event])
            if (i + 1) % 2000 == 0:
                print(f"  {i + 1:,} distinct reads: RSS {rss_mb(pid) - before:+.1f} MB")
        stats, took = _timed_stats(client, server.url, reads)
        after = rss_mb(pid)
        print(
            f"after {DISTINCT_READS:,} distinct teed reads of {DISTINCT_BYTES // 1024} KB "
            f"({time.perf_counter() - start:.0f} s): RSS {after:.1f} MB ({after - before:+.1f} "
            f"MB, target under +60); /stats {1000 * took:.0f} ms (target under 1 s); "
            f"{_fill(stats)}"
        )
        shutil.rmtree(reads / "src", ignore_errors=True)
        start = time.perf_counter()
        for i in range(0, SMALL_PATHS, SMALL_BATCH):
            events = [
                {
                    "path": f"src/area{j % 97}/sub{j % 13}/component_{j}_handler.py",
                    "kind": "read",
                    "content": _body(f"s{j}", SMALL_BYTES),
                }
                for j in range(i, i + SMALL_BATCH)
            ]
            _post(client, server.url, paths, events)
        stats, took = _timed_stats(client, server.url, paths)
        print(
            f"after {SMALL_PATHS:,} distinct small paths ({time.perf_counter() - start:.0f} s): "
            f"{_fill(stats)}; /stats {1000 * took:.0f} ms"
        )
        _concurrent_reads(server.url, pid, reads)
        seen = len(fake.requests)
        reply = client.post(
            f"{server.url}/api/ask", json={"question": "What is in src?", "cwd": str(paths)}
        )
        calls = [r for r in fake.requests[seen:] if r.body.get("tools")]
        if reply.status_code != 200 or not calls:
            print(f"the question after the flood failed: {reply.status_code} {reply.text[:200]}")
            return
        sent = int(_prompt_chars(calls[0].body) / CHARS_PER_TOKEN)
        stats, _ = _timed_stats(client, server.url, paths)
        limit = stats["context"]["max_tokens"] if stats else 0
        print(
            f"the next question's prompt: {sent:,} tokens sent of a {limit:,}-token window "
            f"({100 * sent / max(limit, 1):.0f} %); {_fill(stats)}, "
            f"{stats['compactions'] if stats else '?'} compaction(s)"
        )


def _concurrent_reads(url: str, pid: int, root: Path) -> None:
    """CONCURRENT_HOOKS clients teeing distinct 96 KB reads at once (faster than the
    workspace applies them), then /stats at once."""
    before = rss_mb(pid)
    bodies = [_body(f"c{i}", DISTINCT_BYTES) for i in range(64)]

    def hook(n: int) -> None:
        with httpx.Client(timeout=60) as client:
            for i in range(n, CONCURRENT_READS, CONCURRENT_HOOKS):
                event = {"path": f"src/c{i}.py", "kind": "read", "content": bodies[i % 64] + str(i)}
                _post(client, url, root, [event])

    start = time.perf_counter()
    with ThreadPoolExecutor(CONCURRENT_HOOKS) as pool:
        list(pool.map(hook, range(CONCURRENT_HOOKS)))
    posted = time.perf_counter() - start
    with httpx.Client(timeout=60) as client:
        stats, took = _timed_stats(client, url, root)
    after = rss_mb(pid)
    print(
        f"after {CONCURRENT_READS:,} distinct 96 KB reads from {CONCURRENT_HOOKS} concurrent "
        f"hooks ({posted:.0f} s): RSS {after - before:+.1f} MB; /stats "
        f"{'answered' if stats else 'FAILED'} in {1000 * took:.0f} ms"
    )


def budget_section(tmp: Path, fake: FakeProvider, env: dict[str, str]) -> None:
    repo = tmp / "budget"
    (repo / "src").mkdir(parents=True)
    big = repo / "src" / "big.py"
    with ServerProcess(tmp / "data-budget", env) as server, httpx.Client(timeout=120) as client:
        # A notification alone creates no workspace: a clear does, without a model call.
        client.post(f"{server.url}/clear", json={"cwd": str(repo)}).raise_for_status()
        ratios: list[float] = []
        compacted_rows = 0
        print("question  estimate(tok)  sent(tok)  billed(tok)  estimate/billed")
        for i in range(QUESTIONS):
            content = _body(f"v{i}", BIG_FILE_BYTES)
            big.write_text(content, encoding="utf-8")
            kind = "read" if i == 0 else "write"
            _post(client, server.url, repo, [{"path": str(big), "kind": kind, "content": content}])
            before = _stats(client, server.url, repo)
            estimate = int(before["context"]["used_tokens"])
            seen = len(fake.requests)
            reply = client.post(
                f"{server.url}/api/ask",
                json={"question": f"What does handler_v{i}_3 return?", "cwd": str(repo)},
            )
            reply.raise_for_status()
            answer_calls = [r for r in fake.requests[seen:] if r.body.get("tools")]
            sent = int(_prompt_chars(answer_calls[0].body) / CHARS_PER_TOKEN)
            billed = int(reply.json()["tokens"]["input"])  # normalised: cached and uncached
            after = _stats(client, server.url, repo)
            note = ""
            if after["compactions"] > before["compactions"]:
                # The estimate passed the threshold, so the question compacted first: what was
                # sent is the compacted prompt, not the one estimated.
                compacted_rows += 1
                note = "  (over the threshold: compacted before sending)"
            else:
                ratios.append(estimate / max(billed, 1))
            ratio = estimate / max(billed, 1)
            print(f"{i + 1:8d}  {estimate:13,d}  {sent:9,d}  {billed:11,d}  {ratio:15.2f}{note}")
        worst = max(ratios, key=lambda r: abs(r - 1.0))
        print(
            f"estimate/billed over {len(ratios)} questions sent as estimated: median "
            f"{statistics.median(ratios):.2f}, worst {worst:.2f} (target within 0.85-1.15); "
            f"{compacted_rows} question(s) compacted first"
        )


def first_question_on(repo: Path, tmp: Path, fake: FakeProvider, env: dict[str, str]) -> None:
    """/stats just before a real tree's first question against the prompt of that question's
    first model call ("sent": its text / 4; "billed" counts every call the question made)."""
    with ServerProcess(tmp / "data-first", env) as server, httpx.Client(timeout=120) as client:
        client.post(f"{server.url}/clear", json={"cwd": str(repo)}).raise_for_status()
        started = time.perf_counter()
        estimate = int(_stats(client, server.url, repo)["context"]["used_tokens"])
        stats_ms = (time.perf_counter() - started) * 1000
        seen = len(fake.requests)
        question = {"question": "What does this project do?", "cwd": str(repo)}
        reply = client.post(f"{server.url}/api/ask", json=question)
        reply.raise_for_status()
        calls = [r for r in fake.requests[seen:] if r.body.get("tools")]
        sent = int(_prompt_chars(calls[0].body) / CHARS_PER_TOKEN)
        print(
            f"first question on {repo}: estimate {estimate:,} / sent {sent:,} = "
            f"{estimate / max(sent, 1):.2f} (target 0.85-1.15); billed "
            f"{int(reply.json()['tokens']['input']):,} over {len(calls)} call(s); the first "
            f"/stats took {stats_ms:.0f} ms"
        )


def _prompt_chars(body: dict[str, Any]) -> int:
    """Characters of the prompt's text: system blocks, messages and tool definitions."""
    system = body.get("system") or []
    chars = len(system) if isinstance(system, str) else sum(len(b["text"]) for b in system)
    for message in body.get("messages", []):
        chars += sum(len(t) for t in _texts(message.get("content")))
    return chars + len(str(body.get("tools", "")))


def _texts(content: object) -> Iterable[str]:
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for block in content:
            if isinstance(block, dict):
                for key in ("text", "content"):
                    yield from _texts(block.get(key))


def plan_section() -> None:
    for count in (5000, 10_000):
        window = Window("/bench")
        for i in range(count):
            window.record_read(f"src/pkg{i // 100}/module_{i}.py", f"{i:064x}", 1000)
        tokens = window.estimated_tokens()
        marks = Watermarks(max_tokens=tokens, threshold=0.85, floor=0.6)
        start = time.perf_counter()
        evicted = evict_manifest_lru(window, marks)
        took = time.perf_counter() - start
        print(
            f"planning at {count:,} manifest files: {1000 * took:,.1f} ms "
            f"({evicted:,} evicted, {tokens:,} -> {window.estimated_tokens():,} tokens)"
        )


def log_section(tmp: Path, fake: FakeProvider, overlap_s: float) -> None:
    repo = tmp / "overlap"
    (repo / "src").mkdir(parents=True)
    environ = {
        "LIVE_MEMORY_DATA_DIR": str(tmp / "data-log"),
        "ANTHROPIC_API_KEY": "dummy",
        "ANTHROPIC_BASE_URL": fake.anthropic_base_url,
        "LIVE_MEMORY_MAX_PARALLEL_QUERIES": "4",
    }
    settings = load_settings(environ, home=tmp / "home")
    fake.default_reply = Text("It returns the value.", delay_s=0.4)
    samples: list[tuple[int, int]] = []

    async def run(service: LiveMemoryService) -> None:
        stop = time.monotonic() + overlap_s

        async def asker(n: int) -> None:
            i = 0
            while time.monotonic() < stop:
                await service.ask(f"asker {n} question {i}?", str(repo))
                i += 1

        async def notifier() -> None:
            i = 0
            while time.monotonic() < stop:
                event = {
                    "path": f"src/n{i % 50}.py",
                    "kind": "write",
                    "content": _body(f"n{i}", 8192),
                }
                await service.notify({"cwd": str(repo), "events": [event]})
                i += 1
                await asyncio.sleep(0.005)

        async def sampler() -> None:
            while time.monotonic() < stop:
                samples.append(_notify_log_sample())
                await asyncio.sleep(0.25)

        await asyncio.gather(*(asker(n) for n in range(6)), notifier(), sampler())

    service = LiveMemoryService(settings)
    try:
        asyncio.run(run(service))
    finally:
        asyncio.run(service.shutdown(grace_s=10))
    if not samples:
        print("notify_log: no samples")
        return
    lengths = [n for n, _ in samples]
    flights = [f for _, f in samples]
    print(
        f"notify_log over {overlap_s:.0f} s of overlapping questions: max {max(lengths)} entries, "
        f"median {statistics.median(lengths):.0f}, last {lengths[-1]} "
        f"(forks in flight: max {max(flights)}, {len(samples)} samples)"
    )


def _notify_log_sample() -> tuple[int, int]:
    """(notify_log entries, forks in flight) of the bench's one workspace actor; a read from
    another thread of two sizes, good enough for a sample."""
    for ref in pykka.ActorRegistry.get_all():
        weak = getattr(ref, "_actor_weakref", None)
        actor = weak() if weak is not None else None
        if type(actor).__name__ != "WorkspaceActor":
            continue
        holder = getattr(actor, "state", actor)
        log = getattr(holder, "notify_log", None) or getattr(actor, "notify_log", ())
        flights = getattr(holder, "in_flight", None) or getattr(actor, "in_flight", {})
        return len(log), len(flights)
    return 0, 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--overlap-s", type=float, default=60.0)
    parser.add_argument("--skip", default="", help="comma-separated: rss,budget,plan,log,flood")
    args = parser.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    tmp = Path(tempfile.mkdtemp(prefix="lm-bounds-"))
    with FakeProvider(default_reply=Text("handler returns value plus its index.")) as fake:
        env = {"ANTHROPIC_API_KEY": "dummy", "ANTHROPIC_BASE_URL": fake.anthropic_base_url}
        if "rss" not in skip:
            print("== held bytes and RSS")
            rss_section(tmp, fake, env)
        if "budget" not in skip:
            print("== budget estimate vs prompt sent")
            budget_section(tmp, fake, env)
            if repo := os.environ.get("LIVE_MEMORY_BENCH_REPO"):
                first_question_on(Path(repo).resolve(), tmp, fake, env)
        if "plan" not in skip:
            print("== compaction planning")
            plan_section()
        if "log" not in skip:
            print("== notify_log under overlapping questions")
            log_section(tmp, fake, args.overlap_s)
        if "flood" not in skip:
            print("== distinct-path floods")
            flood_section(tmp, fake, env)


if __name__ == "__main__":
    main()
