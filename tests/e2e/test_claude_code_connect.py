"""The real Claude Code CLI connected by `live-memory connect claude-code` (no plugin: the MCP
server in ~/.claude.json, hooks in ~/.claude/settings.json), with the command hook and with
`--http-hooks` (Claude Code posts PostToolUse to /notify itself). Its model, a FakeProvider
that also plays Live Memory's, reads a file and then asks; nothing tells the server about the
repository beforehand, and the question sees the file's bytes.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
from pathlib import Path

import pytest

from live_memory.cli import run as cli_run
from tests.e2e.test_claude_code_cli import install_claude_code
from tests.support.fakes import FakeProvider, Recorded, Reply, Text, ToolUse
from tests.support.repo import make_repo
from tests.support.server_process import ServerProcess

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

ASK_TOOL = "mcp__live-memory__ask_live_memory"
LIVE_MEMORY_SYSTEM = "You are Live Memory"
SESSION_TIMEOUT_S = 180.0
APP_SOURCE = "def answer():\n    return 'read-marker-e5a1'\n"
QUESTION = "Where is answer() defined? (question-marker-0b8d)"
ANSWER = "answer() is in src/app.py (answer-marker-c4f2)"
FINAL = "All done (final-marker-71d9)"


def _is_live_memory(recorded: Recorded) -> bool:
    return LIVE_MEMORY_SYSTEM in json.dumps(recorded.body.get("system"))


def _finished_tool_turns(messages: list[dict[str, object]]) -> int:
    return sum(
        1
        for m in messages
        if m.get("role") == "user"
        and isinstance(m.get("content"), list)
        and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in m["content"])  # type: ignore[union-attr]
    )


def _respond(repo: Path, recorded: Recorded) -> Reply:
    if _is_live_memory(recorded):
        return Text(ANSWER)
    if "Read" not in {tool.get("name") for tool in recorded.body.get("tools", [])}:
        return Text("ok")  # an auxiliary Claude Code call
    turn = _finished_tool_turns(recorded.body.get("messages", []))
    if turn == 0:
        return ToolUse("Read", {"file_path": str(repo / "src" / "app.py")})
    if turn == 1:
        return ToolUse(ASK_TOOL, {"question": QUESTION, "cwd": str(repo)})
    return Text(FINAL)


@pytest.mark.parametrize("hooks", ["command", "http"])
@pytest.mark.timeout(600)
def test_real_claude_code_connected_without_the_plugin_tees_its_read(
    tmp_path: Path, hooks: str
) -> None:
    cli = install_claude_code()
    home = tmp_path / "home"
    home.mkdir()
    repo = make_repo(tmp_path / "repo", {"src/app.py": APP_SOURCE, "README.md": "# demo\n"})
    with FakeProvider() as fake:
        fake.responder = lambda recorded: _respond(repo, recorded)
        server_env = {
            "ANTHROPIC_API_KEY": "dummy-key",
            "ANTHROPIC_BASE_URL": fake.url,
            "LIVE_MEMORY_WATCHER": "off",
        }
        with ServerProcess(tmp_path / "data", server_env) as server:
            env = {
                "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "HOME": str(home),
                "LIVE_MEMORY_PORT": str(server.port),
                "XDG_RUNTIME_DIR": os.environ["XDG_RUNTIME_DIR"],  # where the server publishes
            }
            argv = ["connect", "claude-code", *(["--http-hooks"] if hooks == "http" else [])]
            out, err = io.StringIO(), io.StringIO()
            connect_env = {**env, "LIVE_MEMORY_DATA_DIR": str(tmp_path / "cli-data")}
            assert cli_run(argv, connect_env, out, err) == 0, err.getvalue()
            command = [*cli, "-p", "Use the tools as you see fit.", "--output-format", "json"]
            command += ["--allowedTools", f"Read,{ASK_TOOL}", "--no-session-persistence"]
            done = subprocess.run(
                command,
                cwd=repo,
                env=env
                | {
                    "ANTHROPIC_API_KEY": "sk-ant-dummy-e2e",
                    "ANTHROPIC_BASE_URL": fake.url,
                    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                    "DISABLE_AUTOUPDATER": "1",
                },
                capture_output=True,
                timeout=SESSION_TIMEOUT_S,
                check=False,
            )
            stats = server.request("GET", "/stats", params={"cwd": str(repo)}).json()
            diagnosis = (
                f"claude exit={done.returncode}\nstderr:\n{done.stderr.decode()[-3000:]}\n"
                f"stdout:\n{done.stdout.decode()[-3000:]}\n"
                f"server log:\n{server.log.read_text(errors='replace')[-3000:]}"
            )

    assert done.returncode == 0, diagnosis
    result = json.loads(done.stdout)
    assert result["is_error"] is False and result["result"] == FINAL, diagnosis
    asked = [
        r.body
        for r in fake.requests
        if _is_live_memory(r) and QUESTION in json.dumps(r.body.get("messages"))
    ]
    assert len(asked) == 1, diagnosis
    assert "read-marker-e5a1" in json.dumps(asked[0]["messages"]), diagnosis
    assert stats["questions_answered"] == 1, stats
