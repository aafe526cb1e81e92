"""Live Memory next to the original plugin (the peer), measured in one run, printed as ours/peer.

    LIVE_MEMORY_PEER_DIR=/path/to/claude-code-live-memory .venv/bin/python bench/peer_compare.py

LIVE_MEMORY_PEER_DIR is a checkout of github.com/shofer-dev/claude-code-live-memory whose
server is installed in a venv: LIVE_MEMORY_PEER_VENV, else `<dir>/.venv` or `<dir>/../venv`
(`pip install -e <dir>/server "mcp<2" httpx`). Without it the script says so and exits 0.

Both servers get the same treatment: one fake model provider (tests/support, in a child
process), the same client code, the same small git repository, the same order of work:

  questions   N questions in one MCP session (wall time per question, the server's CPU per
              question, and the cost from the server's own /stats token counts, priced the
              same for both at claude-haiku-4-5 list prices)
  notify      POST /notify: 8 keep-alive connections (wrk, else our own client) and a new
              connection per request, as a hook makes them (hey, else our own client)
  hook        the plugin's hook process end to end (python start-up + POST), with hyperfine
  memory      RSS when idle, sampled every 0.25 s through everything above, and at the end

The machine is usually shared: compare the ratios of one run, not figures across runs.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import _repo_root  # puts the repository root on sys.path for tests.support
import httpx
from _proc import cpu_s, rss_mb
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from live_memory.providers import Usage, cost_usd, price_for

ROOT = Path(_repo_root.ROOT)
QUESTIONS = int(os.environ.get("PEER_COMPARE_QUESTIONS", "30"))
NOTIFY_SECONDS = 6
NEW_CONNECTION_REQUESTS = 1500
HOOK_RUNS = 40
RSS_SAMPLE_S = 0.25


def _fake_child(queue: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    from tests.support.fakes import FakeProvider, Text  # noqa: PLC0415 (in the child only)

    with FakeProvider(default_reply=Text("frobnicate() lives in pkg/core.py.")) as fake:
        queue.put(fake.url)
        threading.Event().wait()  # until the parent terminates this process


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _repo(root: Path) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "core.py").write_text("def frobnicate(x):\n    return 2 * x\n")
    (root / "README.md").write_text("# sample\n")
    git = ["git", "-c", "user.name=b", "-c", "user.email=b@e", "-C", str(root)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "init"], check=True)
    return root


@dataclass
class Side:
    """One server under test and how to speak its dialect."""

    name: str
    argv: list[str]
    hook: list[str]
    port: int = field(default_factory=_free_port)
    proc: subprocess.Popen[bytes] | None = None
    samples: list[tuple[str, float]] = field(default_factory=list)
    figures: dict[str, float] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def ask_args(self, question: str, cwd: Path) -> dict[str, object]:
        extra = {"timeout": 60} if self.name == "peer" else {}  # the peer requires it
        return {"question": question, "cwd": str(cwd), **extra}

    def notify_body(self, cwd: Path, path: Path, content: str) -> dict[str, object]:
        if self.name == "peer":
            return {
                "kind": "read",
                "event": "",
                "cwd": str(cwd),
                "paths": [str(path)],
                "contents": {str(path): content},
            }
        return {
            "cwd": str(cwd),
            "events": [{"path": str(path), "kind": "read", "content": content}],
        }

    def start(self, work: Path, fake_url: str) -> None:
        env = {
            k: v for k, v in os.environ.items() if not k.startswith(("LIVE_MEMORY_", "ANTHROPIC_"))
        }
        home = work / f"{self.name}-home"
        home.mkdir()
        env.update(
            HOME=str(home),
            LIVE_MEMORY_DATA_DIR=str(work / f"{self.name}-data"),
            LIVE_MEMORY_HOST="127.0.0.1",
            LIVE_MEMORY_PORT=str(self.port),
            LIVE_MEMORY_PROVIDER="anthropic",
            LIVE_MEMORY_API_KEY="sk-bench",
            LIVE_MEMORY_MODEL="fake-model",  # no real minimum cacheable size: both may cache
            LIVE_MEMORY_BASE_URL=fake_url,
        )
        log = open(work / f"{self.name}.log", "wb")  # noqa: SIM115 (lives as long as the server)
        self.proc = subprocess.Popen(
            self.argv, env=env, stdout=log, stderr=log, start_new_session=True
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.url}/health", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.2)
        raise RuntimeError(f"{self.name} did not answer /health; see {log.name}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(30)


class Sampler:
    """RSS of a process every RSS_SAMPLE_S, labelled with the phase running then."""

    def __init__(self, side: Side) -> None:
        self.side, self.phase, self._stop = side, "idle", threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        assert self.side.proc is not None
        while not self._stop.wait(RSS_SAMPLE_S):
            self.side.samples.append((self.phase, rss_mb(self.side.proc.pid, missing=float("nan"))))

    def close(self) -> None:
        self._stop.set()
        self._thread.join()


async def _questions(side: Side, repo: Path, count: int) -> list[float]:
    times = []
    async with (
        streamable_http_client(f"{side.url}/mcp") as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        for i in range(count):
            start = time.perf_counter()
            result = await session.call_tool(
                "ask_live_memory", side.ask_args(f"where is frobnicate {i}?", repo)
            )
            times.append(time.perf_counter() - start)
            if result.is_error:
                raise RuntimeError(f"{side.name}: {result.content}")
    return times


def _usd_per_question(side: Side, repo: Path) -> float:
    stats = httpx.get(f"{side.url}/stats", params={"cwd": str(repo)}, timeout=30).json()
    if "tokens" in stats:  # ours: input counts the whole prompt, cached or not
        t = stats["tokens"]
        read, write, out = t["cache_read"], t["cache_write"], t["output"]
        uncached, asked = t["input"] - read - write, stats["questions_answered"]
    else:  # the peer: inputTokens is the uncached part
        uncached, read, write = (
            stats["inputTokens"],
            stats["cacheReadTokens"],
            stats["cacheWriteTokens"],
        )
        out, asked = stats["outputTokens"], stats["questionsAnswered"]
    usage = Usage(uncached + read + write, out, read, write)
    return cost_usd(usage, price_for("claude-haiku-4-5")) / max(asked, 1)


def _load_tool(argv: list[str], pattern: str) -> float | None:
    if shutil.which(argv[0]) is None:
        return None
    run = subprocess.run(argv, check=False, capture_output=True, text=True, timeout=600)
    found = re.search(pattern, run.stdout)
    return float(found.group(1)) if found else None


def _notify(side: Side, repo: Path, work: Path) -> None:
    files = [(repo / "pkg" / f"gen_{i}.py", f"VALUE_{i} = {i}\n" * 20) for i in range(50)]
    bodies = [json.dumps(side.notify_body(repo, path, text)) for path, text in files]
    script = work / f"{side.name}-notify.lua"
    script.write_text(
        "local bodies = {" + ",".join(f"[==[{b}]==]" for b in bodies) + "}\nlocal n = 0\n"
        "wrk.method = 'POST'\nwrk.headers['Content-Type'] = 'application/json'\n"
        "request = function()\n  n = n % #bodies + 1\n"
        "  return wrk.format(nil, '/notify', nil, bodies[n])\nend\n"
    )
    wrk = ["wrk", "-t2", "-c8", f"-d{NOTIFY_SECONDS}s", "-s", str(script), side.url]
    side.figures["notify_keepalive_rps"] = _load_tool(wrk, r"Requests/sec:\s+([0-9.]+)") or float(
        "nan"
    )
    body = work / f"{side.name}-body.json"
    body.write_text(bodies[0])
    hey = [
        "hey",
        "-n",
        str(NEW_CONNECTION_REQUESTS),
        "-c",
        "1",
        "-disable-keepalive",
        "-m",
        "POST",
        "-T",
        "application/json",
        "-D",
        str(body),
        f"{side.url}/notify",
    ]
    side.figures["notify_new_conn_rps"] = _load_tool(hey, r"Requests/sec:\s+([0-9.]+)") or float(
        "nan"
    )


def _hook(side: Side, repo: Path, work: Path) -> None:
    """The hook process as Claude Code runs it on a Read: payload on stdin, env for the port."""
    read = {"file_path": str(repo / "pkg" / "core.py")}
    payload = {
        "hook_event_name": "PostToolUse",
        "tool_name": "Read",
        "cwd": str(repo),
        "session_id": "bench",
        "tool_input": read,
    }
    stdin = work / f"{side.name}-hook.json"
    stdin.write_text(json.dumps(payload))
    env = (
        f"LIVE_MEMORY_PORT={side.port} LIVE_MEMORY_NOTIFY_URL={side.url}/notify "
        f"CLAUDE_PLUGIN_DATA={work}"
    )
    command = f"env {env} " + " ".join(side.hook) + f" < {stdin}"
    out = work / f"{side.name}-hook-hyperfine.json"
    if shutil.which("hyperfine") is None:
        return
    # hyperfine runs it through sh (for the redirection) and subtracts the shell's own start.
    subprocess.run(
        [
            "hyperfine",
            "--warmup",
            "3",
            "--runs",
            str(HOOK_RUNS),
            "--export-json",
            str(out),
            command,
        ],
        check=False,
        capture_output=True,
        timeout=600,
    )
    if out.exists():
        side.figures["hook_process_ms"] = 1000 * json.loads(out.read_text())["results"][0]["mean"]


def measure(side: Side, work: Path, fake_url: str) -> None:
    side.start(work, fake_url)
    assert side.proc is not None
    pid = side.proc.pid
    repo = _repo(work / f"{side.name}-repo")
    time.sleep(1.0)
    side.figures["rss_idle_mb"] = rss_mb(pid, missing=float("nan"))
    sampler = Sampler(side)
    try:
        sampler.phase = "questions"
        asyncio.run(_questions(side, repo, 2))  # the session and the workspace exist now
        cpu = cpu_s(pid)
        times = asyncio.run(_questions(side, repo, QUESTIONS))
        side.figures["question_ms"] = 1000 * statistics.median(times)
        side.figures["question_server_cpu_ms"] = 1000 * (cpu_s(pid) - cpu) / QUESTIONS
        side.figures["usd_per_question"] = _usd_per_question(side, repo)
        sampler.phase = "notify"
        _notify(side, repo, work)
        sampler.phase = "hook"
        _hook(side, repo, work)
        sampler.phase = "end"
        time.sleep(1.0)
        side.figures["rss_end_mb"] = rss_mb(pid, missing=float("nan"))
        side.figures["rss_growth_mb"] = side.figures["rss_end_mb"] - side.figures["rss_idle_mb"]
    finally:
        sampler.close()
        side.stop()


def _rss_line(side: Side) -> str:
    phases: dict[str, list[float]] = {}
    for phase, mb in side.samples:
        phases.setdefault(phase, []).append(mb)
    return ", ".join(f"{p} {min(v):.1f}-{max(v):.1f}" for p, v in phases.items())


LOWER_IS_BETTER = (
    "question_ms",
    "question_server_cpu_ms",
    "usd_per_question",
    "hook_process_ms",
    "rss_idle_mb",
    "rss_end_mb",
    "rss_growth_mb",
)


def report(ours: Side, peer: Side, out: Callable[[str], None] = print) -> None:
    out(f"{'figure':26s} {'ours':>12s} {'peer':>12s} {'ours/peer':>10s}")
    for name in [*ours.figures]:
        a, b = ours.figures[name], peer.figures.get(name, float("nan"))
        ratio = a / b if b else float("nan")
        better = "(lower is better)" if name in LOWER_IS_BETTER else "(higher is better)"
        out(f"{name:26s} {a:12.6g} {b:12.6g} {ratio:10.3f} {better}")
    for side in (ours, peer):
        out(
            f"RSS MB by phase, {side.name} (min-max of {len(side.samples)} samples): "
            + _rss_line(side)
        )


def _peer_side() -> Side | None:
    checkout = os.environ.get("LIVE_MEMORY_PEER_DIR")
    if not checkout:
        return None
    venv_env = os.environ.get("LIVE_MEMORY_PEER_VENV")
    candidates = (
        [Path(venv_env)] if venv_env else [Path(checkout) / ".venv", Path(checkout).parent / "venv"]
    )
    for venv in candidates:
        server = venv / "bin" / "live-memory-server"
        if server.exists():
            hook = ["python3", str(Path(checkout) / "hooks" / "notify.py"), "read"]
            return Side("peer", [str(server)], hook)
    return None


def main() -> int:
    peer = _peer_side()
    if peer is None:
        print(
            "skipped: set LIVE_MEMORY_PEER_DIR to a peer checkout with its server installed "
            "(see this script's docstring)"
        )
        return 0
    hook = ["python3", "-I", "-S", str(ROOT / "plugin" / "scripts" / "notify.py")]
    ours = Side("ours", [sys.executable, "-m", "live_memory.cli", "serve"], hook)
    ours.argv += ["--host", "127.0.0.1", "--port", str(ours.port)]
    work = Path(tempfile.mkdtemp(prefix="peer-compare-"))
    queue: multiprocessing.Queue[str] = multiprocessing.Queue()
    fake = multiprocessing.Process(target=_fake_child, args=(queue,), daemon=True)
    fake.start()
    try:
        url = queue.get(timeout=60)
        for side in (peer, ours):
            measure(side, work, url)
    finally:
        fake.terminate()
        fake.join(10)
    print(
        f"questions {QUESTIONS}, machine cpus {os.cpu_count()}, "
        f"load {os.getloadavg()[0]:.1f}, work dir {work}"
    )
    report(ours, peer)
    return 0


if __name__ == "__main__":
    sys.exit(main())
