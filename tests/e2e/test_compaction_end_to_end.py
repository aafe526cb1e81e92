"""Compaction through the real server: small window, neutral summariser, ledger provenance."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tests.e2e.conftest import ensure_workspace, provider_env
from tests.support import loopback
from tests.support.app_server import AppServer, RunningServer
from tests.support.fakes import Error, FakeProvider, Recorded, Reply, Text

pytestmark = pytest.mark.e2e

LEDGER_LINE = "[architecture] The tokenizer lives in src/parser.py and feeds src/app.py."
MAX_TOKENS = 4000
FLOOR = 0.6


def _is_summary(recorded: Recorded) -> bool:
    return not recorded.body.get("tools")


def _responder(recorded: Recorded) -> Reply:
    if _is_summary(recorded):
        return Text(LEDGER_LINE)
    if "SECRET-QUESTION-MARKER" in json.dumps(recorded.body["messages"][-1]):
        return Text("short answer")
    return Text("a long answer " * 220)  # the conversation, not held files, fills the window


def _ask(server: RunningServer, repo: Path, question: str) -> dict[str, object]:
    reply = loopback.post(
        f"{server.url}/api/ask", json={"question": question, "cwd": str(repo)}, timeout=30
    )
    assert reply.status_code == 200, reply.text
    return dict(reply.json())


def test_overflow_compacts_to_the_floor_with_a_neutral_summary_and_provenance(
    fake: FakeProvider, repo: Path, tmp_path: Path
) -> None:
    (repo / "src" / "parser.py").write_text("def tokenize(text):\n    return text.split()\n")
    fake.responder = _responder
    env = provider_env(fake, "anthropic") | {"LIVE_MEMORY_MAX_CONTEXT_TOKENS": str(MAX_TOKENS)}
    with AppServer(tmp_path / "data", env) as server:
        # Held files stay under their cap (half the floor), so they alone never overflow.
        big = [
            {"path": f"docs/part{i}.md", "kind": "read", "content": f"part {i} " * 140}
            for i in range(4)
        ]
        big.append({"path": "src/parser.py", "kind": "read", "content": "def tokenize(): ..."})
        ensure_workspace(server.url, repo)
        loopback.post(
            f"{server.url}/notify", json={"cwd": str(repo), "events": big}
        ).raise_for_status()
        stats = server.request("GET", "/stats", params={"cwd": str(repo)}).json()
        for i in range(20):  # until the next question's prompt passes the threshold
            if stats["context"]["used_tokens"] > 0.85 * MAX_TOKENS:
                break
            _ask(server, repo, f"Question {i} about the docs?")
            stats = server.request("GET", "/stats", params={"cwd": str(repo)}).json()
        assert stats["compactions"] == 0
        _ask(server, repo, "SECRET-QUESTION-MARKER: how is input tokenized?")
        stats = server.request("GET", "/stats", params={"cwd": str(repo)}).json()
        assert stats["compactions"] == 1
        assert stats["context"]["used_tokens"] <= FLOOR * MAX_TOKENS
        assert stats["ledger_facts"] == 1
        _ask(server, repo, "What does the ledger say?")
        loopback.post(
            f"{server.url}/notify",
            json={"cwd": str(repo), "events": [{"path": "src/parser.py", "kind": "change"}]},
        ).raise_for_status()
        stats = server.request("GET", "/stats", params={"cwd": str(repo)}).json()
        assert stats["ledger_stale_facts"] == 1
    summaries = [r for r in fake.requests if _is_summary(r)]
    assert summaries  # the least recently used files first, then old Q/A if still needed
    assert all("SECRET-QUESTION-MARKER" not in json.dumps(r.body) for r in summaries)
    assert "part 0" in json.dumps(summaries[0].body)
    answers = [r for r in fake.requests if not _is_summary(r)]
    assert LEDGER_LINE.split("] ", 1)[1] in json.dumps(answers[-1].body["system"])


def test_prompt_too_long_is_recovered_by_compact_and_retry(
    fake: FakeProvider, repo: Path, tmp_path: Path
) -> None:
    env = provider_env(fake, "anthropic")
    with AppServer(tmp_path / "data", env) as server:
        ensure_workspace(server.url, repo)
        loopback.post(
            f"{server.url}/notify",
            json={
                "cwd": str(repo),
                "events": [{"path": "README.md", "kind": "read", "content": "demo " * 400}],
            },
        ).raise_for_status()
        fake.script(Error.prompt_too_long(), Text(LEDGER_LINE), Text("recovered"))
        answer = _ask(server, repo, "What is this?")
        stats = server.request("GET", "/stats", params={"cwd": str(repo)}).json()
    assert answer["answer"] == "recovered"
    assert stats["compactions"] == 1


HISTORY_FACT = "[behaviour] tokenize() in src/parser.py splits its text on whitespace."
PARSER = "def tokenize(text):\n    return text.split()\n"


def _folding_responder(recorded: Recorded) -> Reply:
    if _is_summary(recorded):  # a fold of old questions, or a distillation of held files
        folding = "Question:" in json.dumps(recorded.body["messages"])
        return Text(HISTORY_FACT if folding else "[docs] The docs come in four parts.")
    return Text(f"tokenize() is in src/parser.py. {'a long answer ' * 220}")


def _compact_again(server: RunningServer, repo: Path) -> None:
    for i in range(20):
        _ask(server, repo, f"Later question {i}?")
        stats = server.request("GET", "/stats", params={"cwd": str(repo)}).json()
        if stats["compactions"] >= 2:
            return
    raise AssertionError("no second compaction")


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _stale(server: RunningServer, repo: Path) -> tuple[int, int]:
    stats = server.request("GET", "/stats", params={"cwd": str(repo)}).json()
    return stats["ledger_stale_facts"], stats["knowledge"]["store"]["demoted"]


@pytest.mark.parametrize("restart", [False, True], ids=["in-session", "after-restart"])
def test_facts_folded_under_pressure_carry_sources_and_are_demoted_when_their_file_changes(
    fake: FakeProvider, repo: Path, tmp_path: Path, restart: bool
) -> None:
    """The history is folded after the files' entries were evicted for room: the fold must
    still know the files the questions read, or its facts cite nothing and never go stale."""
    (repo / "src" / "parser.py").write_text(PARSER, encoding="utf-8")
    fake.responder = _folding_responder
    env = provider_env(fake, "anthropic") | {"LIVE_MEMORY_MAX_CONTEXT_TOKENS": str(MAX_TOKENS)}
    change = {"cwd": str(repo), "events": [{"path": "src/parser.py", "kind": "change"}]}
    with AppServer(tmp_path / "data", env) as server:
        ensure_workspace(server.url, repo)
        read = {"path": "src/parser.py", "kind": "read", "content": PARSER}
        loopback.post(
            f"{server.url}/notify", json={"cwd": str(repo), "events": [read]}
        ).raise_for_status()
        for i in range(20):
            _ask(server, repo, f"Question {i}: how is input tokenized?")
            stats = server.request("GET", "/stats", params={"cwd": str(repo)}).json()
            if stats["compactions"]:
                break
        assert stats["compactions"] == 1
        facts = server.request("GET", "/api/export", params={"cwd": str(repo)}).json()["facts"]
        folded = [f for f in facts if "splits its text" in f["text"]]
        assert folded, facts
        assert all(["src/parser.py", _sha(PARSER)] in f["sources"] for f in folded), facts
        assert _stale(server, repo) == (0, 0)
        if not restart:
            (repo / "src" / "parser.py").write_text(PARSER + "# edited\n", encoding="utf-8")
            loopback.post(f"{server.url}/notify", json=change).raise_for_status()
            assert _stale(server, repo)[0] >= 1
            _compact_again(server, repo)  # the store learns it: the fact stays demoted
            assert _stale(server, repo)[1] >= 1
            facts = server.request("GET", "/api/export", params={"cwd": str(repo)}).json()
            assert all(f["stale"] for f in facts["facts"] if "splits its text" in f["text"])
    if restart:
        with AppServer(tmp_path / "data", env) as server:
            _ask(server, repo, "Anything new?")  # loads the workspace from its snapshot
            (repo / "src" / "parser.py").write_text(PARSER + "# edited\n", encoding="utf-8")
            loopback.post(f"{server.url}/notify", json=change).raise_for_status()
            assert _stale(server, repo)[0] >= 1
            _compact_again(server, repo)  # the store learns it: the fact stays demoted
            assert _stale(server, repo)[1] >= 1
