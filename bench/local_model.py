"""The reuse table of a local model server: ten questions, two notified files between.

Run: .venv/bin/python bench/local_model.py [--questions N]

Per question: prompt tokens, re-evaluated tokens, tokens reused from the server's KV cache,
model calls, and the time to the first token. The whole app runs in this process (the same app
`live-memory serve` builds) and is asked over MCP.

Which server: a real llama.cpp runtime when one can run here (`llama_cpp` importable, its
server module present, and a GGUF file named by LIVE_MEMORY_BENCH_GGUF); otherwise the
replaying fake of llama.cpp's `llama-server` (tests/support/fakes/fake_local_server.py), whose
one slot keeps a simulated KV cache (the longest common prefix with the previous prompt is
reused, the rest re-evaluated at the recorded 25 prompt tokens/s) and whose replies follow the
recorded behaviours. Time to first token is then the simulated prefill time.

Why the fake on this project's machines: llama-cpp-python has no wheel on the package index
(only a source distribution that builds llama.cpp, ~25 minutes on two cores), and no GGUF
model can be fetched here (no model hub). The table shows the prompt layout's reuse and that the
cold guard's extra calls are gone (one call per question where the model answers in prose).
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
_STUB = "class {0}:\n    def {1}(self):\n        ...\n"
FILES = {
    "src/click/parser.py": _STUB.format("OptionParser", "parse_args") * 20,
    "src/click/core.py": _STUB.format("Context", "invoke") * 40,
    "src/click/formatting.py": _STUB.format("HelpFormatter", "write_usage") * 20,
}
NOTIFY_AFTER = {3: "src/click/core.py", 6: "src/click/formatting.py"}
ANSWER = "OptionParser in src/click/parser.py parses the options; Context drives it."


def _real_runtime() -> tuple[bool, str]:
    gguf = os.environ.get("LIVE_MEMORY_BENCH_GGUF", "")
    if importlib.util.find_spec("llama_cpp") is None:
        return False, "llama-cpp-python is not installed (the index has only its source build)"
    if not gguf or not Path(gguf).is_file():
        return False, "no GGUF model: set LIVE_MEMORY_BENCH_GGUF to a model file"
    return True, gguf


@contextmanager
def _real_server(gguf: str) -> Iterator[str]:
    """llama-cpp-python's server on a free port, n_ctx 8192 (its usage has no cache field)."""
    port = 18000 + os.getpid() % 1000
    command = [sys.executable, "-m", "llama_cpp.server", "--model", gguf, "--port", str(port)]
    process = subprocess.Popen([*command, "--n_ctx", "8192"], stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                httpx.get(f"{url}/v1/models", timeout=1).raise_for_status()
                break
            except httpx.HTTPError:
                time.sleep(0.5)
        yield f"{url}/v1"
    finally:
        process.terminate()
        process.wait(30)


def _stats(server: AppServer, repo: Path) -> dict[str, int]:
    body = server.request("GET", "/stats", params={"cwd": str(repo)}).json()
    tokens = body["tokens"]
    return {"input": tokens["input"], "cached": tokens["cache_read"], "q": 0}


def run(count: int) -> None:
    real, detail = _real_runtime()
    with tempfile.TemporaryDirectory() as tmp, _server(real, detail) as (base_url, fake):
        root = Path(tmp)
        repo = make_repo(root / "repo", FILES)
        env = {
            "LIVE_MEMORY_PROVIDER": "openai",
            "LIVE_MEMORY_BASE_URL": base_url,
            "LIVE_MEMORY_MODEL": fake.model if fake else "local",
            "LIVE_MEMORY_MAX_ANSWER_TOKENS": "256",
            "LIVE_MEMORY_PRELOAD_GLOBS": "src/**/*.py",
        }
        print(f"server: {'real llama-cpp-python, ' + detail if real else 'replaying fake'}")
        if not real:
            print(f"(real runtime not used: {detail})")
        with AppServer(root / "data", env) as server:
            rows = []
            before = {"input": 0, "cached": 0}
            for index, question in enumerate(QUESTIONS[:count], start=1):
                calls_before = len(fake.chat_requests) if fake else 0
                started = time.monotonic()
                is_error, _answer = call_tool(
                    server.url, "ask_live_memory", {"question": question, "cwd": str(repo)}
                )
                wall = time.monotonic() - started
                after = _stats(server, repo)
                prompt = after["input"] - before["input"]
                reused = after["cached"] - before["cached"]
                calls = len(fake.chat_requests) - calls_before if fake else 0
                evaluated = prompt - reused
                ttft = evaluated / fake.prefill_tps if fake else wall
                rows.append((index, prompt, evaluated, reused, calls, ttft, is_error))
                before = after
                path = NOTIFY_AFTER.get(index)
                if path is not None:
                    file = repo / path
                    file.write_text(file.read_text() + "\n# changed\n")
                    server.request(
                        "POST",
                        "/notify",
                        json={"cwd": str(repo), "events": [{"path": str(file), "kind": "change"}]},
                    )
            _print(rows, simulated=not real)


@contextmanager
def _server(real: bool, gguf: str) -> Iterator[tuple[str, FakeLocalServer | None]]:
    if real:
        with _real_server(gguf) as url:
            yield url, None
        return
    with FakeLocalServer(flavour="llama-server", n_ctx=16384, default=Says(ANSWER)) as fake:
        yield fake.openai_base_url, fake


def _print(rows: list[tuple[int, int, int, int, int, float, bool]], *, simulated: bool) -> None:
    ttft = "TTFT s (simulated)" if simulated else "TTFT s (wall)"
    print(f"{'q':>3} {'prompt':>8} {'re-eval':>8} {'reused':>8} {'reuse':>6} {'calls':>5} {ttft}")
    total_prompt = total_reused = 0
    for index, prompt, evaluated, reused, calls, first, failed in rows:
        share = 100 * reused / prompt if prompt else 0.0
        flag = "  (error)" if failed else ""
        print(
            f"{index:>3} {prompt:>8} {evaluated:>8} {reused:>8} {share:>5.0f}% {calls:>5} "
            f"{first:>8.1f}{flag}"
        )
        total_prompt += prompt
        total_reused += reused
    share = 100 * total_reused / total_prompt if total_prompt else 0.0
    evaluated = total_prompt - total_reused
    print(f"all {total_prompt:>8} {evaluated:>8} {total_reused:>8} {share:>5.0f}%")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--questions", type=int, default=len(QUESTIONS))
    args = parser.parse_args()
    run(max(1, min(args.questions, len(QUESTIONS))))


if __name__ == "__main__":
    main()
