"""LIVE_MEMORY_OPENAI_EXTRA_BODY: the extra fields an OpenAI-compatible gateway (OpenRouter and
the like) needs arrive in every request the server makes, over real HTTP to the fake endpoint."""

from __future__ import annotations

import ipaddress
import json
import socket
import time
from pathlib import Path

import pytest

from live_memory.agent.prompt import NEUTRAL_SUMMARY_SYSTEM_PROMPT
from live_memory.config import constants as C
from tests.e2e.conftest import provider_env
from tests.e2e.test_concurrency_end_to_end import _warm
from tests.support import loopback
from tests.support.app_server import AppServer
from tests.support.fakes import Error, FakeProvider, Recorded, Text, ToolUse
from tests.support.mcp_client import call_tool

pytestmark = pytest.mark.e2e

EXTRA = {"provider": {"order": ["deepinfra"], "allow_fallbacks": False}, "transforms": []}


def _env(fake: FakeProvider) -> dict[str, str]:
    return provider_env(fake, "openai") | {"LIVE_MEMORY_OPENAI_EXTRA_BODY": json.dumps(EXTRA)}


def _system(recorded: Recorded) -> str:
    return str(recorded.body["messages"][0]["content"])


def _carries_extra(recorded: Recorded) -> bool:
    return all(recorded.body.get(key) == value for key, value in EXTRA.items())


def test_extra_body_fields_arrive_in_answers_and_summaries(
    fake: FakeProvider, repo: Path, tmp_path: Path
) -> None:
    with AppServer(tmp_path / "data", _env(fake)) as server:
        fake.script(ToolUse("Read", {"file_path": "src/app.py"}), Text("answer() returns 42."))
        is_error, text = call_tool(
            server.url, "ask_live_memory", {"question": "What does answer do?", "cwd": str(repo)}
        )
        assert not is_error, text
        # A prompt the endpoint finds too long is compacted (the held file is summarised: a
        # summary request), then retried.
        event = {"path": "README.md", "kind": "read", "content": "demo " * 400}
        loopback.post(
            f"{server.url}/notify", json={"cwd": str(repo), "events": [event]}
        ).raise_for_status()
        fake.script(Error.prompt_too_long(), Text("[architecture] app.py answers."), Text("ok"))
        reply = loopback.post(
            f"{server.url}/api/ask", json={"question": "Again?", "cwd": str(repo)}, timeout=60
        )
        assert reply.status_code == 200, reply.text
        stats = server.request("GET", "/stats", params={"cwd": str(repo)}).json()
    assert stats["compactions"] == 1
    assert fake.pending_replies() == 0
    summaries = [r for r in fake.requests if _system(r) == NEUTRAL_SUMMARY_SYSTEM_PROMPT]
    assert len(summaries) == 1 and len(fake.requests) > 3
    assert all(_carries_extra(r) for r in fake.requests), [r.body.keys() for r in fake.requests]
    assert all(r.body["model"] == "gpt-5-mini" and r.body["messages"] for r in fake.requests)


def _non_local_name_for_loopback() -> str | None:
    """A host name of this machine that resolves to loopback but that Live Memory does not
    take for a local model server by its name (so keep-warm pings it), or None."""
    name = socket.gethostname()
    try:
        address = ipaddress.ip_address(socket.gethostbyname(name))
    except (OSError, ValueError):
        return None
    return name if address.is_loopback and "." not in name and name != "localhost" else None


@pytest.mark.slow
def test_extra_body_fields_arrive_in_keep_warm_pings(
    fake: FakeProvider, repo: Path, tmp_path: Path
) -> None:
    # Keep-warm never pings a model server on a loopback address (its KV cache needs none), so
    # the fake is reached here by a host name that is not taken for a local one.
    name = _non_local_name_for_loopback()
    if name is None:
        pytest.skip("this machine's host name does not resolve to a loopback address")
    env = _env(fake) | {
        "OPENAI_BASE_URL": fake.openai_base_url.replace("127.0.0.1", name),
        "LIVE_MEMORY_KEEP_WARM": "true",
        "LIVE_MEMORY_KEEP_WARM_INTERVAL_S": "0.5",
        "LIVE_MEMORY_KEEP_WARM_MAX_IDLE_S": "30",
    }
    fake.responder = lambda recorded: Text("answer")
    with AppServer(tmp_path / "data", env) as server:
        _warm(server, repo)
        reply = loopback.post(
            f"{server.url}/api/ask", json={"question": "What?", "cwd": str(repo)}, timeout=60
        )
        assert reply.status_code == 200, reply.text
        fake.wait_for_requests(2, timeout_s=60)  # the answer, then a ping
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # the server's count of finished pings
            stats = server.request("GET", "/stats", params={"cwd": str(repo)}).json()
            if stats["keep_warm"]["pings"] >= 1:
                break
            time.sleep(0.05)
    assert stats["keep_warm"]["pings"] >= 1
    pings = [r for r in fake.requests if r.body["max_tokens"] == C.KEEP_WARM_PING_MAX_TOKENS]
    assert pings and all(_carries_extra(r) for r in fake.requests)
