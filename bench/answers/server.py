"""llama.cpp's HTTP server (llama-server's API) from the pinned `xllamacpp` wheel, and the probe
that decides whether a model counts: does it make a *structured* tool call?

The server runs in its own process (`python -c _SERVE ...`, the command is printed with the
results): one slot, the model's own Jinja chat template (llama.cpp's `--jinja`, which turns a
Qwen `<tool_call>` block into `tool_calls`), prompt caching on (`cache_prompt`, the KV cache of
the slot reused for the longest common prefix).
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import httpx

__all__ = ["ProbeResult", "ServerSpec", "llama_server", "probe_tool_calls", "serve_command"]

_SERVE = """
import sys, xllamacpp as xlc
params = xlc.CommonParams()
params.model.path = sys.argv[1]
params.n_ctx = int(sys.argv[2])
params.n_parallel = 1
params.cpuparams.n_threads = params.cpuparams_batch.n_threads = int(sys.argv[3])
params.use_jinja = True
params.cache_prompt = True
params.endpoint_slots = True
params.sampling.seed = int(sys.argv[4])
server = xlc.Server(params)
print(server.listening_address, flush=True)
sys.stdin.read()
"""
START_TIMEOUT_S = 300.0
"""Loading 1 GB of weights from a cold page cache on a busy 2-core machine."""


@dataclass(frozen=True, slots=True)
class ServerSpec:
    gguf: str
    n_ctx: int
    threads: int
    seed: int


def serve_command(spec: ServerSpec) -> list[str]:
    return [
        sys.executable,
        "-c",
        _SERVE,
        spec.gguf,
        str(spec.n_ctx),
        str(spec.threads),
        str(spec.seed),
    ]


def printable_serve_command(spec: ServerSpec) -> str:
    """The server command as one shell line (the script body shown, not elided)."""
    return shlex.join(serve_command(spec))


@contextmanager
def llama_server(spec: ServerSpec) -> Iterator[str]:
    """The server's OpenAI-compatible base URL (`.../v1`) while the block runs."""
    process = subprocess.Popen(
        serve_command(spec),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        address = process.stdout.readline().strip()
        if not address:
            raise RuntimeError("the xllamacpp server did not start (is xllamacpp installed?)")
        url = address if address.startswith("http") else f"http://{address}"
        httpx.get(f"{url}/health", timeout=START_TIMEOUT_S).raise_for_status()
        yield f"{url}/v1"
    finally:
        if process.stdin is not None:
            process.stdin.close()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


@dataclass(frozen=True, slots=True)
class ProbeResult:
    structured: bool
    """The reply carried `tool_calls` naming the offered tool with its argument."""
    detail: str


_PROBE_TOOL = {
    "type": "function",
    "function": {
        "name": "Read",
        "description": "Read a file of the repository and return its lines.",
        "parameters": {
            "type": "object",
            "properties": {"file_path": {"type": "string", "description": "relative path"}},
            "required": ["file_path"],
        },
    },
}


def probe_tool_calls(base_url: str, timeout_s: float = 600.0) -> dict[str, ProbeResult]:
    """Ask the model to read a named file with the one tool offered, in auto mode (what Live
    Memory's agent loop sends) and with `tool_choice: "required"` (llama.cpp then constrains the
    output to a call), and report per mode whether it answered with structured `tool_calls`."""
    return {mode: _probe(base_url, mode, timeout_s) for mode in ("auto", "required")}


def _probe(base_url: str, mode: str, timeout_s: float) -> ProbeResult:
    body = {
        "model": "local",
        "messages": [
            {"role": "system", "content": "You answer questions about a repository. Use tools."},
            {"role": "user", "content": "Read the file src/app/config.py and tell me its port."},
        ],
        "tools": [_PROBE_TOOL],
        "tool_choice": mode,
        "max_tokens": 96,
        "temperature": 0,
    }
    reply = httpx.post(f"{base_url}/chat/completions", json=body, timeout=timeout_s)
    reply.raise_for_status()
    message = reply.json()["choices"][0]["message"]
    for call in message.get("tool_calls") or []:
        function = call.get("function", {})
        if function.get("name") == "Read" and "config.py" in str(function.get("arguments")):
            return ProbeResult(True, f"tool_calls: Read {function.get('arguments')}")
    return ProbeResult(False, f"no structured call; text: {str(message.get('content'))[:120]!r}")
