"""Spend guardrails: a spent daily budget blocks model calls and says until when."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import provider_env
from tests.e2e.test_concurrency_end_to_end import _warm
from tests.support.app_server import AppServer
from tests.support.fakes import FakeProvider, Text

pytestmark = pytest.mark.e2e


def test_exhausted_daily_budget_refuses_questions_without_a_model_call(
    fake: FakeProvider, repo: Path, tmp_path: Path
) -> None:
    env = provider_env(fake, "anthropic") | {"LIVE_MEMORY_DAILY_BUDGET_USD": "0.0001"}
    fake.responder = lambda recorded: Text("an answer that costs money")
    with AppServer(tmp_path / "data", env) as server:
        _warm(server, repo)
        first = server.request("POST", "/api/ask", json={"question": "one?", "cwd": str(repo)})
        assert first.status_code == 200
        calls = len(fake.requests)
        second = server.request("POST", "/api/ask", json={"question": "two?", "cwd": str(repo)})
        health = server.request("GET", "/health").json()
        stats = server.request("GET", "/stats", params={"cwd": str(repo)}).json()
    assert second.status_code == 429
    assert "budget exhausted until" in second.json()["error"]
    assert len(fake.requests) == calls
    assert health["budget"]["exhausted"] is True
    assert health["budget"]["spent_today_usd"] > 0.0001
    assert stats["budget"]["exhausted"] is True and stats["budget"]["background_paused"] is True


def test_workspace_budget_only_blocks_that_workspace(
    fake: FakeProvider, repo: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    env = provider_env(fake, "anthropic") | {"LIVE_MEMORY_WORKSPACE_DAILY_BUDGET_USD": "0.0001"}
    fake.responder = lambda recorded: Text("answer")
    with AppServer(tmp_path / "data", env) as server:
        _warm(server, repo)
        _warm(server, other)
        assert (
            server.request(
                "POST", "/api/ask", json={"question": "a?", "cwd": str(repo)}
            ).status_code
            == 200
        )
        blocked = server.request("POST", "/api/ask", json={"question": "b?", "cwd": str(repo)})
        allowed = server.request("POST", "/api/ask", json={"question": "c?", "cwd": str(other)})
    assert blocked.status_code == 429
    assert allowed.status_code == 200
