"""ask_live_memory end to end: real server subprocess, real mcp client, fake provider."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.e2e.conftest import provider_env
from tests.support.app_server import AppServer
from tests.support.fakes import Error, FakeProvider, Text, ToolUse
from tests.support.mcp_client import call_tool, list_tools
from tests.support.repo import make_repo

pytestmark = pytest.mark.e2e

TRAILER = re.compile(
    r"\n---\n\[live-memory\] model=\S+ latency=[\d.]+s tokens=\d+/\d+\(in/out\) "
    r"tool_calls=(\d+) files_read=(\d+) cost=(\$[\d.]+|n/a\(subscription\)) context=\d+%"
)


@pytest.mark.parametrize("wire", ["anthropic", "openai"])
def test_grounded_answer_through_grep_then_read(
    wire: str, fake: FakeProvider, repo: Path, tmp_path: Path
) -> None:
    fake.script(
        ToolUse("Grep", {"pattern": "def answer"}),
        ToolUse("Read", {"file_path": "src/app.py"}),
        Text("answer() lives in src/app.py and returns 42."),
    )
    with AppServer(tmp_path / "data", provider_env(fake, wire)) as server:
        tools = {t.name: t for t in list_tools(server.url)}
        assert "ask_live_memory" in tools
        assert tools["ask_live_memory"].annotations.read_only_hint is True
        is_error, text = call_tool(
            server.url,
            "ask_live_memory",
            {"question": "Where is answer defined?", "cwd": str(repo / "src" / "util")},
        )
        assert not is_error, text
        assert text.startswith("answer() lives in src/app.py and returns 42.")
        match = TRAILER.search(text)
        assert match, text
        assert match.group(1) == "2" and match.group(2) == "1"
        stats = server.request("GET", "/stats", params={"cwd": str(repo)}).json()
    assert stats["workspace"] == str(repo)
    assert stats["questions_answered"] == 1
    requests = fake.requests
    assert len(requests) == 3
    assert all(r.wire == wire for r in requests)
    last = json.dumps(requests[-1].body)
    assert "src/app.py" in last and "return 42" in last


def test_relative_or_missing_cwd_is_a_clear_tool_error(
    fake: FakeProvider, repo: Path, tmp_path: Path
) -> None:
    with AppServer(tmp_path / "data", provider_env(fake, "anthropic")) as server:
        is_error, text = call_tool(server.url, "ask_live_memory", {"question": "q?", "cwd": "src"})
        assert is_error and "absolute" in text
        missing = str(tmp_path / "nowhere")
        is_error, text = call_tool(
            server.url, "ask_live_memory", {"question": "q?", "cwd": missing}
        )
        assert is_error and "nowhere" in text
        is_error, text = call_tool(
            server.url, "ask_live_memory", {"question": "", "cwd": str(repo)}
        )
        assert is_error and "question" in text
        is_error, text = call_tool(server.url, "ask_live_memory", {"question": "q?"})
        assert is_error and text == (
            "Error executing tool ask_live_memory: cwd is required: the absolute path of the "
            "repository root"
        )
        is_error, text = call_tool(server.url, "ask_live_memory", {"cwd": str(repo)})
        assert is_error and text.endswith(
            "question is required: the question about the code, in plain words"
        )
        assert "pydantic" not in text
    assert fake.requests == []


def test_model_reading_outside_the_workspace_gets_errors_and_no_outside_byte_leaks(
    fake: FakeProvider, repo: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside-secret.txt"
    outside.write_text("TOP-SECRET-OUTSIDE-MARKER\n", encoding="utf-8")
    (repo / "escape").symlink_to(outside)
    fake.script(
        ToolUse("Read", {"file_path": "../outside-secret.txt"}),
        ToolUse("Read", {"file_path": str(outside)}),
        ToolUse("Read", {"file_path": "escape"}),
        ToolUse("Grep", {"pattern": "TOP-SECRET", "path": ".."}),
        ToolUse("Glob", {"pattern": "../*"}),
        Text("I could not read it."),
    )
    with AppServer(tmp_path / "data", provider_env(fake, "anthropic")) as server:
        is_error, text = call_tool(
            server.url, "ask_live_memory", {"question": "What is outside?", "cwd": str(repo)}
        )
    assert not is_error, text
    bodies = [json.dumps(r.body) for r in fake.requests]
    assert all("TOP-SECRET-OUTSIDE-MARKER" not in body for body in bodies)
    results = [
        block
        for message in fake.requests[-1].body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]
    assert len(results) == 5
    assert all(block.get("is_error") for block in results[:3])


def test_history_survives_a_restart(fake: FakeProvider, repo: Path, tmp_path: Path) -> None:
    env = provider_env(fake, "anthropic")
    fake.script(ToolUse("Read", {"file_path": "README.md"}), Text("It is a tiny demo project."))
    with AppServer(tmp_path / "data", env) as server:
        is_error, _ = call_tool(
            server.url, "ask_live_memory", {"question": "What is this repo?", "cwd": str(repo)}
        )
        assert not is_error
    with AppServer(tmp_path / "data", env) as server:
        stats = server.request("GET", "/stats", params={"cwd": str(repo)}).json()
        assert stats["messages_retained"] == 2
        assert stats["file_contexts"]["loaded"] == 1
        fake.script(Text("Still a tiny demo project."))
        is_error, _ = call_tool(
            server.url, "ask_live_memory", {"question": "Remind me?", "cwd": str(repo)}
        )
        assert not is_error
    last = json.dumps(fake.requests[-1].body)
    assert "What is this repo?" in last and "It is a tiny demo project." in last


def test_without_a_provider_the_server_starts_and_questions_name_the_variable(
    repo: Path, tmp_path: Path
) -> None:
    with AppServer(tmp_path / "data", {}) as server:
        health = server.request("GET", "/health").json()
        assert health["status"] == "no_provider"
        assert "ANTHROPIC_API_KEY" in health["problem"]
        is_error, text = call_tool(
            server.url, "ask_live_memory", {"question": "q?", "cwd": str(repo)}
        )
        assert is_error and "ANTHROPIC_API_KEY" in text
        response = server.request("POST", "/api/ask", json={"question": "q?", "cwd": str(repo)})
        assert response.status_code == 503
        assert "ANTHROPIC_API_KEY" in response.json()["error"]


def test_provider_failure_is_a_clear_tool_error_and_the_workspace_stays_usable(
    fake: FakeProvider, tmp_path: Path
) -> None:
    # Docs only: the structural index has no code to ground it, so the memory stays cold.
    repo = make_repo(tmp_path / "docs", {"README.md": "# demo\n"})
    fake.script(*[Error(500, "api_error", "boom")] * 4)
    with AppServer(tmp_path / "data", provider_env(fake, "anthropic")) as server:
        is_error, text = call_tool(
            server.url, "ask_live_memory", {"question": "q?", "cwd": str(repo)}
        )
        assert is_error and "500" in text
        # The memory is still cold: the first ungrounded answer is rejected once.
        fake.script(
            Text("ungrounded guess"), ToolUse("Read", {"file_path": "README.md"}), Text("fine now")
        )
        response = server.request("POST", "/api/ask", json={"question": "again?", "cwd": str(repo)})
        assert response.status_code == 200, response.text
        assert response.json()["answer"] == "fine now"
