"""The real OpenCode CLI (`opencode run`), connected by `live-memory connect opencode` to a real
`live-memory serve`; one FakeProvider (Anthropic wire) plays both models, told apart by system
prompt: OpenCode's (its `anthropic` provider pointed at the fake) and Live Memory's own.

The pinned `opencode-ai` is installed from npm once into `.cache/opencode/<version>/`. Its model
is scripted to read a file with its `read` tool, then call `ask_live_memory`, then finish.
Nothing tells the server about the repository beforehand: the plugin `connect` wrote opens the
workspace at `session.created` and tees the read, and the question sees the file's bytes.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import pytest

from live_memory.cli import run as cli_run
from tests.e2e.npm_cli import install_npm_cli, run_session
from tests.support.fakes import FakeProvider, Recorded, Reply, Text, ToolUse
from tests.support.repo import make_repo
from tests.support.server_process import ServerProcess

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

VERSION = "1.18.33"
SESSION_TIMEOUT_S = 240.0
LIVE_MEMORY_SYSTEM = "You are Live Memory"
APP_SOURCE = "def answer():\n    return 'read-marker-4e0b'\n"
QUESTION = "Where is answer() defined? (question-marker-a61c)"
ANSWER = "answer() is in src/app.py (answer-marker-9d35)"
FINAL = "All done (final-marker-52f7)"


def _is_live_memory(recorded: Recorded) -> bool:
    return LIVE_MEMORY_SYSTEM in json.dumps(recorded.body.get("system"))


def _tool_results(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        block
        for message in messages
        if message.get("role") == "user" and isinstance(message.get("content"), list)
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]


class Script:
    """OpenCode's model: read, then ask_live_memory, then a final text; Live Memory answers."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self.ask_tool: str | None = None

    def respond(self, recorded: Recorded) -> Reply:
        if _is_live_memory(recorded):
            return Text(ANSWER)
        names = [str(tool.get("name")) for tool in recorded.body.get("tools", [])]
        asks = [name for name in names if name.endswith("ask_live_memory")]
        if "read" not in names or not asks:
            return Text("a title")  # OpenCode's small-model calls (the session title)
        self.ask_tool = asks[0]
        done = len(_tool_results(recorded.body.get("messages", [])))
        if done == 0:
            return ToolUse("read", {"filePath": str(self.repo / "src" / "app.py")})
        if done == 1:
            return ToolUse(asks[0], {"question": QUESTION, "cwd": str(self.repo)})
        return Text(FINAL)


@pytest.mark.timeout(600)
def test_real_opencode_tees_its_read_before_asking_live_memory(tmp_path: Path) -> None:
    opencode = install_npm_cli("opencode", "opencode-ai", VERSION, "opencode")
    home = tmp_path / "home"
    config = home / ".config" / "opencode"
    config.mkdir(parents=True)
    repo = make_repo(tmp_path / "repo", {"src/app.py": APP_SOURCE, "README.md": "# demo\n"})
    script = Script(repo)
    with FakeProvider() as fake:
        fake.responder = script.respond
        server_env = {
            "ANTHROPIC_API_KEY": "dummy-key",
            "ANTHROPIC_BASE_URL": fake.url,
            "LIVE_MEMORY_WATCHER": "off",  # the plugin alone must bring the read
        }
        with ServerProcess(tmp_path / "data", server_env) as server:
            env = {
                "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "HOME": str(home),
                "LIVE_MEMORY_PORT": str(server.port),
                "XDG_RUNTIME_DIR": os.environ["XDG_RUNTIME_DIR"],  # where the server publishes
            }
            # The user's own settings first (their provider): connect merges with them.
            provider = {"options": {"baseURL": f"{fake.url}/v1", "apiKey": "dummy"}}
            settings = {"model": "anthropic/claude-sonnet-4-5", "provider": {"anthropic": provider}}
            (config / "opencode.json").write_text(json.dumps(settings))
            out, err = io.StringIO(), io.StringIO()
            connect_env = {**env, "LIVE_MEMORY_DATA_DIR": str(tmp_path / "cli-data")}
            assert cli_run(["connect", "opencode"], connect_env, out, err) == 0, err.getvalue()
            opencode_env = env | {
                "OPENCODE_DISABLE_AUTOUPDATE": "true",
                "OPENCODE_DISABLE_MODELS_FETCH": "true",
            }
            command = [*opencode, "run", "--print-logs", "Use the tools as you see fit."]
            session = run_session(command, cwd=repo, env=opencode_env, timeout_s=SESSION_TIMEOUT_S)
            stats = server.request("GET", "/stats", params={"cwd": str(repo)}).json()
            diagnosis = (
                f"opencode exit={session.returncode}\nstderr:\n{session.stderr.decode()[-5000:]}\n"
                f"stdout:\n{session.stdout.decode()[-2000:]}\n"
                f"server log:\n{server.log.read_text(errors='replace')[-3000:]}"
            )

    assert session.returncode == 0, diagnosis
    assert script.ask_tool is not None, diagnosis
    asked = [
        r.body
        for r in fake.requests
        if _is_live_memory(r) and QUESTION in json.dumps(r.body.get("messages"))
    ]
    assert len(asked) == 1, diagnosis
    assert "read-marker-4e0b" in json.dumps(asked[0]["messages"]), diagnosis
    assert stats["questions_answered"] == 1, stats
    last = [r.body for r in fake.requests if not _is_live_memory(r)][-1]
    assert ANSWER in json.dumps(_tool_results(last.get("messages", []))), diagnosis
    assert FINAL in session.stdout.decode(), diagnosis
