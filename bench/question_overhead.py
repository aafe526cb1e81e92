"""Per-question server overhead with an instantly answering fake model.

Overhead = round trip as the client sees it minus time spent waiting on the provider.
Prints p50/p90 for the REST path (exact provider time per question) and the MCP path (a
persistent real mcp client session on a twin workspace; the provider time of its i-th question
is taken from the REST run's i-th, which had the same prompt size).
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path

import _repo_root  # noqa: F401 (puts the repository root on sys.path for tests.support)
import httpx
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.support.fakes import FakeProvider, Text
from tests.support.server_process import ServerProcess

QUESTIONS = 200


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(int(q * len(ordered)), len(ordered) - 1)]


def _repo(root: Path) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def answer():\n    return 42\n", encoding="utf-8")
    return root


async def _mcp_run(url: str, cwd: str) -> list[float]:
    times = []
    async with (
        streamable_http_client(f"{url}/mcp") as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        for i in range(QUESTIONS):
            start = time.perf_counter()
            result = await session.call_tool(
                "ask_live_memory", {"question": f"question {i}?", "cwd": cwd}
            )
            times.append(time.perf_counter() - start)
            assert not result.is_error
    return times


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="lm-bench-"))
    repo = _repo(tmp / "repo")
    mcp_repo = _repo(tmp / "mcp-repo")
    with FakeProvider(default_reply=Text("answer() is in src/app.py.")) as fake:
        env = {"ANTHROPIC_API_KEY": "dummy", "ANTHROPIC_BASE_URL": fake.anthropic_base_url}
        with ServerProcess(tmp / "data", env) as server, httpx.Client(timeout=30) as client:
            # Warm the memory so the cold-start guard does not add a second model call.
            for root in (repo, mcp_repo):
                # A notification alone creates no workspace; a clear does, model-free.
                client.post(f"{server.url}/clear", json={"cwd": str(root)}).raise_for_status()
                client.post(
                    f"{server.url}/notify",
                    json={
                        "cwd": str(root),
                        "events": [
                            {"path": "src/app.py", "kind": "read", "content": "def answer(): ..."}
                        ],
                    },
                ).raise_for_status()
            rest_total, rest_provider = [], []
            for i in range(QUESTIONS):
                start = time.perf_counter()
                reply = client.post(
                    f"{server.url}/api/ask", json={"question": f"question {i}?", "cwd": str(repo)}
                )
                rest_total.append(time.perf_counter() - start)
                rest_provider.append(reply.json()["provider_s"])
            # A twin workspace, so both paths see the same history sizes (provider time
            # grows with the prompt).
            mcp_total = asyncio.run(_mcp_run(server.url, str(mcp_repo)))
    overhead = [t - p for t, p in zip(rest_total, rest_provider, strict=True)]
    provider_median = statistics.median(rest_provider)
    mcp_overhead = [t - p for t, p in zip(mcp_total, rest_provider, strict=True)]
    print(f"questions per path: {QUESTIONS}")
    print(f"provider wait (fake, SDK incl.): p50 {1000 * provider_median:.2f} ms")
    print(
        f"REST /api/ask overhead: p50 {1000 * statistics.median(overhead):.2f} ms, "
        f"p90 {1000 * _pct(overhead, 0.9):.2f} ms"
    )
    print(
        f"MCP ask_live_memory overhead: p50 {1000 * statistics.median(mcp_overhead):.2f} ms, "
        f"p90 {1000 * _pct(mcp_overhead, 0.9):.2f} ms (round trip p50 "
        f"{1000 * statistics.median(mcp_total):.2f} ms)"
    )


if __name__ == "__main__":
    main()
