"""What an answer carries and what of it the memory keeps, through the real server."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from tests.e2e.conftest import provider_env
from tests.e2e.test_concurrency_end_to_end import _warm
from tests.support import loopback
from tests.support.app_server import AppServer, RunningServer
from tests.support.fakes import FakeProvider, Text
from tests.support.prompts import without_cache_control

pytestmark = pytest.mark.e2e


def _ask(server: RunningServer, repo: Path, question: str) -> dict[str, object]:
    reply = loopback.post(
        f"{server.url}/api/ask", json={"question": question, "cwd": str(repo)}, timeout=60
    )
    assert reply.status_code == 200, reply.text
    body: dict[str, object] = reply.json()
    return body


def test_a_timed_out_notice_never_enters_the_history_and_keeps_the_cached_prefix(
    fake: FakeProvider, repo: Path, tmp_path: Path
) -> None:
    gate = threading.Event()
    fake.script(Text("never sent in time", hold=gate))
    env = provider_env(fake, "anthropic") | {"LIVE_MEMORY_DEFAULT_TIMEOUT_S": "2"}
    with AppServer(tmp_path / "data", env) as server:
        _warm(server, repo)
        first = _ask(server, repo, "where is answer defined?")
        gate.set()
        second = _ask(server, repo, "what does answer return?")
    assert first["timed_out"] is True
    assert str(first["answer"]).startswith("[best-effort answer")
    assert second["timed_out"] is False
    before, after = (without_cache_control(r.body) for r in fake.requests[:2])
    assert "best-effort" not in str(after), "the notice reached the model as an answer"
    assert after["system"] == before["system"]
    prefix = before["messages"][:-1]
    assert after["messages"][: len(prefix)] == prefix
