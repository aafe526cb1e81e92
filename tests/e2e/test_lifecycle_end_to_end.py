"""Keep-warm pings, idle passivation and graceful shutdown through the real server."""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from pathlib import Path

import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.e2e.conftest import provider_env
from tests.e2e.test_cache_layout import _strip
from tests.e2e.test_concurrency_end_to_end import _warm
from tests.support import loopback
from tests.support.app_server import AppServer, RunningServer
from tests.support.fakes import FakeProvider, Text
from tests.support.server_process import ServerProcess

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def _ask(server: RunningServer, repo: Path, question: str) -> httpx.Response:
    return loopback.post(
        f"{server.url}/api/ask", json={"question": question, "cwd": str(repo)}, timeout=60
    )


def test_keep_warm_pings_the_last_questions_prefix_until_max_idle(
    fake: FakeProvider, repo: Path, tmp_path: Path
) -> None:
    env = provider_env(fake, "anthropic") | {
        "LIVE_MEMORY_KEEP_WARM": "true",
        "LIVE_MEMORY_KEEP_WARM_INTERVAL_S": "1",
        "LIVE_MEMORY_KEEP_WARM_MAX_IDLE_S": "3.5",
        "LIVE_MEMORY_MODEL": "claude-sonnet-4-6",  # a cacheable prefix (minimum 1,024 tokens)
    }
    fake.responder = lambda recorded: Text("answer")
    with AppServer(tmp_path / "data", env) as server:
        _warm(server, repo)
        assert _ask(server, repo, "what is this?").status_code == 200
        asked = time.monotonic()  # the server recorded the question before it answered
        question = fake.requests[-1].body
        fake.wait_for_requests(3, timeout_s=60)  # two pings at least
        # No ping may start once max idle has passed since the question (the rule). An absence
        # has no event: wait out max idle and two more intervals, the quiet period the rule
        # promises, before counting. (Counting at max idle itself raced with a ping a loaded
        # machine had started just before it and delivered just after.)
        time.sleep(max(0.0, asked + 3.5 + 2 * 1.0 - time.monotonic()))
        settled = len(fake.requests)
        # Every ping that started has its answer and its count.
        fake.wait_for_answers(settled, timeout_s=60)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            stats = server.request("GET", "/stats", params={"cwd": str(repo)}).json()
            if stats["keep_warm"]["pings"] == settled - 1:
                break
            time.sleep(0.05)  # polling the server's count of finished pings
    pings = [r.body for r in fake.requests[1:settled]]
    # One per interval within max idle: 3 (4 allows a tick on the boundary); pinging on past
    # max idle would have made 5 by the end of the quiet period.
    assert 2 <= len(pings) <= 4
    assert all(p["max_tokens"] == 1 for p in pings)
    head = _strip(question)
    for ping in map(_strip, pings):
        assert ping["system"] == head["system"] and ping["tools"] == head["tools"]
        assert ping["messages"][: len(head["messages"]) - 1] == head["messages"][:-1]
    assert stats["keep_warm"]["pings"] == len(pings)
    assert stats["tokens"]["cache_read"] > 0


def test_idle_workspace_is_passivated_and_restored_on_the_next_question(
    fake: FakeProvider, repo: Path, tmp_path: Path
) -> None:
    env = provider_env(fake, "anthropic") | {"LIVE_MEMORY_PASSIVATE_AFTER_S": "1"}
    fake.responder = lambda recorded: Text("answer")
    # In process: passivation is the app's; this process's threads are the server's plus the
    # test's own (the fake, the client), which stay put while the workspace is passivated.
    with AppServer(tmp_path / "data", env) as server:
        _warm(server, repo)
        assert _ask(server, repo, "first?").status_code == 200
        busy = {thread.ident for thread in threading.enumerate()}
        actor_kinds = {a["kind"] for a in server.request("GET", "/actors").json()}
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            kinds = [a["kind"] for a in server.request("GET", "/actors").json()]
            if "workspace" not in kinds:
                break
            time.sleep(0.2)
        assert "workspace" not in kinds
        # Workspace actors run on the shared pool: passivation never adds an actor's own thread
        # (named "<kind>-<name>"). Threads that start on demand, up to their bounds (the actor
        # pool's, the snapshot settler, executors), may start only now on a loaded machine: a
        # count of the process's threads failed 41 <= 40 in a suite worker.
        added = [t.name for t in threading.enumerate() if t.ident not in busy]
        assert "workspace" in actor_kinds, actor_kinds
        assert not [n for n in added if n.startswith(tuple(f"{k}-" for k in actor_kinds))], added
        stats = server.request("GET", "/stats", params={"cwd": str(repo)}).json()
        assert stats["messages_retained"] == 2
        assert _ask(server, repo, "second?").status_code == 200
    assert "first?" in str(fake.requests[-1].body["messages"])


async def _mcp_ask(url: str, arguments: dict[str, str]) -> tuple[bool, str]:
    """One tool call in a session that listed the tools first, as a real client does (the
    SDK checks a result against the listed schema and would otherwise ask for the list
    after the answer, when the stopping server takes no new connection)."""
    async with (
        streamable_http_client(f"{url}/mcp") as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        await session.list_tools()
        result = await session.call_tool("ask_live_memory", arguments)
    return not result.is_error, "".join(getattr(c, "text", "") for c in result.content)


@pytest.mark.parametrize("transport", ["rest", "mcp"])
def test_sigterm_during_a_question_finishes_it_and_the_snapshot_holds_it(
    transport: str, fake: FakeProvider, repo: Path, tmp_path: Path
) -> None:
    """Every transport drains: an MCP question in flight at SIGTERM used to end with "SSE
    stream ended without a response" and was missing from the snapshot."""
    env = provider_env(fake, "anthropic")
    fake.responder = lambda recorded: Text("answer under shutdown", delay_s=2.0)
    server = ServerProcess(tmp_path / "data", env).start()
    result: list[tuple[bool, str]] = []

    def ask() -> None:
        if transport == "rest":
            reply = _ask(server, repo, "q?")
            result.append((reply.status_code == 200, reply.text))
        else:
            result.append(asyncio.run(_mcp_ask(server.url, {"question": "q?", "cwd": str(repo)})))

    try:
        _warm(server, repo)
        asker = threading.Thread(target=ask)
        asker.start()
        fake.wait_for_requests(1, timeout_s=60)
        code = server.stop(signal.SIGTERM)
        asker.join(timeout=30)
    finally:
        server.stop()
    assert code == 0
    assert result and result[0][0], result
    assert "answer under shutdown" in result[0][1]
    # The snapshot is read back by the app, not the process: served in process is enough.
    with AppServer(tmp_path / "data", env) as again:
        stats = again.request("GET", "/stats", params={"cwd": str(repo)}).json()
    assert stats["messages_retained"] == 2
