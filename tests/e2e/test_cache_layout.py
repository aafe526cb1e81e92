"""The KV-cache contract at the provider: every request, up to its trailing turn, is a prefix
of the next one between compactions; Anthropic gets 2-4 cache_control markers."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import ensure_workspace, provider_env
from tests.support import loopback
from tests.support.app_server import AppServer, RunningServer
from tests.support.fakes import FakeProvider, Text
from tests.support.prompts import without_cache_control as _strip

pytestmark = pytest.mark.e2e

QUESTIONS = 10


def _markers(value: Any) -> int:
    if isinstance(value, dict):
        return int("cache_control" in value) + sum(_markers(v) for v in value.values())
    if isinstance(value, list):
        return sum(_markers(v) for v in value)
    return 0


def _notify(server: RunningServer, repo: Path, events: list[dict[str, str]]) -> None:
    ensure_workspace(server.url, repo)
    reply = loopback.post(f"{server.url}/notify", json={"cwd": str(repo), "events": events})
    assert reply.status_code == 200, reply.text


@pytest.mark.parametrize("wire", ["anthropic", "openai"])
def test_each_request_up_to_its_trailing_turn_is_a_prefix_of_the_next(
    wire: str, fake: FakeProvider, repo: Path, tmp_path: Path
) -> None:
    fake.responder = lambda recorded: Text(f"answer {len(fake.requests)}")
    env = provider_env(fake, wire)
    if wire == "anthropic":
        # A model whose minimum cacheable prefix (1,024 tokens) this small repo's prefix
        # exceeds; below the minimum no breakpoint is placed at all (see the test below).
        env["LIVE_MEMORY_MODEL"] = "claude-sonnet-4-6"
    with AppServer(tmp_path / "data", env) as server:
        _notify(
            server, repo, [{"path": "src/app.py", "kind": "read", "content": "def answer(): 42"}]
        )
        for i in range(QUESTIONS):
            reply = loopback.post(
                f"{server.url}/api/ask",
                json={"question": f"question {i}?", "cwd": str(repo)},
                timeout=30,
            )
            assert reply.status_code == 200, reply.text
            # Something changes between every two questions.
            kind = ("read", "change", "write", "unlink")[i % 4]
            path = f"notes/n{i}.md" if kind in ("read", "write") else "src/app.py"
            event = {"path": path, "kind": kind}
            if kind in ("read", "write"):
                event["content"] = f"note {i}\n"
            _notify(server, repo, [event])
        stats = server.request("GET", "/stats", params={"cwd": str(repo)}).json()
    assert stats["compactions"] == 0
    bodies = [r.body for r in fake.requests]
    assert len(bodies) == QUESTIONS
    for before, after in itertools.pairwise(bodies):
        old, new = _strip(before), _strip(after)
        assert old.get("tools") == new.get("tools")
        assert old.get("system") == new.get("system")
        prefix = old["messages"][:-1]
        assert new["messages"][: len(prefix)] == prefix
        assert len(new["messages"]) > len(old["messages"])
        if wire == "openai":
            assert before["prompt_cache_key"] == after["prompt_cache_key"]
    if wire == "anthropic":
        assert all(2 <= _markers(b) <= 4 for b in bodies)
        assert _markers(bodies[-1]) == 3  # system, frozen block, history end
        assert stats["tokens"]["cache_read"] > 0
    deltas = [m for m in _strip(bodies[-1])["messages"] if "[workspace update" in str(m["content"])]
    assert deltas, "changes reach the model as observation deltas"


def test_no_breakpoint_is_placed_on_a_prefix_below_the_models_minimum(
    fake: FakeProvider, repo: Path, tmp_path: Path
) -> None:
    fake.responder = lambda recorded: Text("answer")
    env = provider_env(fake, "anthropic") | {"LIVE_MEMORY_MODEL": "claude-haiku-4-5"}
    with AppServer(tmp_path / "data", env) as server:
        first = {"path": "src/app.py", "kind": "read", "content": "def answer(): 42"}
        _notify(server, repo, [first])
        reply = loopback.post(
            f"{server.url}/api/ask", json={"question": "q?", "cwd": str(repo)}, timeout=30
        )
        assert reply.status_code == 200, reply.text
        stats = server.request("GET", "/stats", params={"cwd": str(repo)}).json()
    assert stats["prefix"]["min_cacheable_tokens"] == 4096
    assert stats["prefix"]["frozen_cacheable"] is False
    assert _markers(fake.requests[-1].body) == 0
    assert stats["cache_economics"]["breakpoints"] is False
    assert "below" in stats["cache_economics"]["reason"]


def test_a_history_past_the_minimum_gets_its_breakpoint_though_the_prefix_is_short(
    fake: FakeProvider, repo: Path, tmp_path: Path
) -> None:
    fake.responder = lambda recorded: Text("answer")
    env = provider_env(fake, "anthropic") | {"LIVE_MEMORY_MODEL": "claude-haiku-4-5"}
    big = "".join(f"def function_{n}(x):\n    return x * {n}\n" for n in range(800))
    with AppServer(tmp_path / "data", env) as server:
        _notify(server, repo, [{"path": "src/app.py", "kind": "read", "content": "x = 1"}])
        first = loopback.post(
            f"{server.url}/api/ask", json={"question": "q1?", "cwd": str(repo)}, timeout=30
        )
        assert first.status_code == 200, first.text
        # Read after the window froze: it reaches the model as a history delta (~8k tokens).
        _notify(server, repo, [{"path": "src/big.py", "kind": "read", "content": big}])
        second = loopback.post(
            f"{server.url}/api/ask", json={"question": "q2?", "cwd": str(repo)}, timeout=30
        )
        assert second.status_code == 200, second.text
        stats = server.request("GET", "/stats", params={"cwd": str(repo)}).json()
    body = fake.requests[-1].body
    assert stats["prefix"]["min_cacheable_tokens"] == 4096
    assert stats["prefix"]["frozen_cacheable"] is False
    assert stats["prefix"]["history_cacheable"] is True
    assert _markers(body["system"]) == 0
    assert _markers(body["messages"]) == 1
    assert stats["cache_economics"]["breakpoints"] is True
