"""Retrieval from the fact store, end to end over MCP with the scripted fake provider.

Facts imported past the window's ledger cap live only in the store; a question naming one
gets it in its prompt as a retrieval delta appended before the question, and every prompt,
up to its trailing turn, stays a byte prefix of the next (the fake records each request)."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from live_memory.agent.retrieval import RETRIEVAL_HEADING
from tests.e2e.conftest import ensure_workspace, provider_env
from tests.support import loopback
from tests.support.app_server import AppServer
from tests.support.fakes import FakeProvider, Text
from tests.support.fakes.fake_anthropic_wire import prompt_of
from tests.support.mcp_client import call_tool

pytestmark = pytest.mark.e2e

FACTS = 300
ASKED = (7, 123, 250, 123, 42)


def _fact(i: int) -> str:
    return (
        f"Function handle_record_{i:04d} in src/mod_{i:04d}/handler.py parses "
        f"RecordType{i:04d} records."
    )


def _without_trailing_turn(body: dict[str, Any]) -> dict[str, Any]:
    return {**body, "messages": body["messages"][:-1]}


def test_a_retrieval_delta_brings_a_stored_fact_and_keeps_the_byte_prefix_rule(
    fake: FakeProvider, repo: Path, tmp_path: Path
) -> None:
    fake.responder = lambda recorded: Text(f"answer {len(fake.requests)}")
    env = provider_env(fake, "anthropic") | {
        "LIVE_MEMORY_MODEL": "claude-sonnet-4-6",
        "LIVE_MEMORY_MAX_LEDGER_FACTS": "5",  # the rest are only in the store
    }
    with AppServer(tmp_path / "data", env) as server:
        ensure_workspace(server.url, repo)
        facts = [{"text": _fact(i)} for i in range(FACTS)]
        imported = loopback.post(
            f"{server.url}/api/import", json={"cwd": str(repo), "facts": facts}, timeout=60
        )
        assert imported.status_code == 200, imported.text
        assert imported.json()["stored"]["added"] == FACTS
        assert "kept in the fact store" in imported.json()["ledger_full"]
        for n, i in enumerate(ASKED):
            is_error, text = call_tool(
                server.url,
                "ask_live_memory",
                {"question": f"What does handle_record_{i:04d} parse?", "cwd": str(repo)},
            )
            assert not is_error, text
            if n == 1:  # something else changes between two questions, too
                event = {"path": "src/app.py", "kind": "read", "content": "def answer(): 42\n"}
                body = {"cwd": str(repo), "events": [event]}
                assert loopback.post(f"{server.url}/notify", json=body).status_code == 200
        stats = server.request("GET", "/stats", params={"cwd": str(repo)}).json()

    bodies = [r.body for r in fake.requests]
    assert len(bodies) == len(ASKED)
    for body, i in zip(bodies, ASKED, strict=True):
        prompt = prompt_of(body)[0].decode()
        assert _fact(i) in prompt, f"fact {i} missing from its question's prompt"
    # Append-only: each prompt up to its trailing turn is a byte prefix of the next one.
    for before, after in itertools.pairwise(bodies):
        assert prompt_of(after)[0].startswith(prompt_of(_without_trailing_turn(before))[0])
    # The fact asked twice was retrieved once: it stayed in the window.
    last = prompt_of(bodies[-1])[0].decode()
    assert last.count(_fact(123)) == 1
    assert last.count(RETRIEVAL_HEADING) == 4

    knowledge = stats["knowledge"]
    assert knowledge["store"]["current"] == FACTS
    assert knowledge["resident"]["facts"] <= FACTS
    retrieval = knowledge["retrieval"]
    assert retrieval["searches"] == len(ASKED)
    assert retrieval["hits"] == len(ASKED)
    assert retrieval["hit_rate"] == 1.0
    assert retrieval["appended"] >= 4
    assert "index" in knowledge  # the structural index reports its coverage there


def test_the_store_outlives_a_restart_and_the_snapshot_adds_nothing_twice(
    fake: FakeProvider, repo: Path, tmp_path: Path
) -> None:
    fake.responder = lambda recorded: Text("answer")
    env = provider_env(fake, "anthropic") | {"LIVE_MEMORY_MAX_LEDGER_FACTS": "5"}
    facts = [{"text": _fact(i)} for i in range(50)]
    with AppServer(tmp_path / "data", env) as server:
        ensure_workspace(server.url, repo)
        body = {"cwd": str(repo), "facts": facts}
        assert server.request("POST", "/api/import", json=body).status_code == 200
    with AppServer(tmp_path / "data", env) as server:  # restored from its snapshot
        stats = server.request("GET", "/stats", params={"cwd": str(repo)}).json()
        store = stats["knowledge"]["store"]
        assert (store["stored"], store["current"]) == (50, 50)  # the snapshot's 5 confirmed
        assert stats["ledger_facts"] <= 50
        is_error, text = call_tool(
            server.url,
            "ask_live_memory",
            {"question": "What does handle_record_0030 parse?", "cwd": str(repo)},
        )
        assert not is_error, text
        exported = server.request("GET", "/api/export", params={"cwd": str(repo)}).json()
    assert _fact(30) in prompt_of(fake.requests[-1].body)[0].decode()
    assert sorted(f["text"] for f in exported["facts"]) == sorted(f["text"] for f in facts)
