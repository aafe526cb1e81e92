"""The real Codex CLI (`codex exec`), connected by `live-memory connect codex` to a real
`live-memory serve`, its model a fake Responses API (tests/support/fakes/fake_responses.py).

The pinned `@openai/codex` is installed from npm once into `.cache/codex/<version>/`. Its model
is scripted to read a file through its shell (`cat`, the way Codex reads), then call
`ask_live_memory`, then finish. Nothing tells the server about the repository beforehand: the
SessionStart hook opens the workspace, the PostToolUse hook on Bash tees the file the command
named, and the question sees the file's bytes.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from live_memory.cli import run as cli_run
from tests.e2e.npm_cli import install_npm_cli, run_session
from tests.support.fakes import FakeProvider, Recorded, Reply, Text
from tests.support.fakes.fake_responses import FakeResponses, Item, ResponsesRequest, call, message
from tests.support.repo import make_repo
from tests.support.server_process import ServerProcess

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

VERSION = "0.171.0"
SESSION_TIMEOUT_S = 180.0
APP_SOURCE = "def answer():\n    return 'read-marker-2a9c'\n"
QUESTION = "Where is answer() defined? (question-marker-5f1d)"
ANSWER = "answer() is in src/app.py (answer-marker-77b0)"
FINAL = "All done (final-marker-0c3e)"


class Script:
    """Codex's model: `cat` the file, then ask_live_memory, then a final message."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self.ask_tool: str | None = None

    def respond(self, request: ResponsesRequest) -> list[Item]:
        asks = [name for name in request.tool_names if name.endswith("ask_live_memory")]
        outputs = request.items("function_call_output")
        if not asks:
            return [message("no live-memory tool")]
        self.ask_tool = asks[0]
        if not outputs:
            return [call("exec_command", {"cmd": "cat src/app.py"}, "call-read")]
        if len(outputs) == 1:
            args = {"question": QUESTION, "cwd": str(self.repo)}
            return [call(asks[0], args, "call-ask", request.namespace_of(asks[0]))]
        return [message(FINAL)]


def _live_memory(recorded: Recorded) -> Reply:
    return Text(ANSWER)


@pytest.mark.timeout(600)
def test_real_codex_tees_its_shell_read_before_asking_live_memory(tmp_path: Path) -> None:
    codex = install_npm_cli("codex", "@openai/codex", VERSION, "codex")
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    repo = make_repo(tmp_path / "repo", {"src/app.py": APP_SOURCE, "README.md": "# demo\n"})
    script = Script(repo)
    with (
        FakeProvider() as fake,
        FakeResponses(script.respond) as model,
        ServerProcess(
            tmp_path / "data",
            {
                "ANTHROPIC_API_KEY": "dummy-key",
                "ANTHROPIC_BASE_URL": fake.url,
                "LIVE_MEMORY_WATCHER": "off",  # the hook alone must bring the read
            },
        ) as server,
    ):
        fake.responder = _live_memory
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "LIVE_MEMORY_PORT": str(server.port),
            "XDG_RUNTIME_DIR": os.environ["XDG_RUNTIME_DIR"],  # where the server publishes
        }
        # The user's own settings first (their model provider): connect merges with them.
        (home / ".codex" / "config.toml").write_text(
            '# my provider\nmodel = "gpt-5"\nmodel_provider = "fake"\n\n'
            f'[model_providers.fake]\nname = "fake"\nbase_url = "{model.url}"\n'
            'wire_api = "responses"\nenv_key = "FAKE_OPENAI_KEY"\n'
        )
        out, err = io.StringIO(), io.StringIO()
        connect_env = {**env, "LIVE_MEMORY_DATA_DIR": str(tmp_path / "cli-data")}
        assert cli_run(["connect", "codex"], connect_env, out, err) == 0, err.getvalue()
        command = [*codex, "exec", "--skip-git-repo-check"]
        command += ["--dangerously-bypass-approvals-and-sandbox", "--dangerously-bypass-hook-trust"]
        command += ["Use the tools as you see fit."]
        session = run_session(
            command,
            cwd=repo,
            env=env | {"FAKE_OPENAI_KEY": "dummy", "CODEX_HOME": str(home / ".codex")},
            timeout_s=SESSION_TIMEOUT_S,
        )
        stats = server.request("GET", "/stats", params={"cwd": str(repo)}).json()
        calls = [(r.tool_names[-3:], len(r.items("function_call_output"))) for r in model.requests]
        diagnosis = (
            f"codex exit={session.returncode}\nstderr:\n{session.stderr.decode()[-4000:]}\n"
            f"stdout:\n{session.stdout.decode()[-3000:]}\nmodel calls: {calls}"
            f"\nserver log:\n{server.log.read_text(errors='replace')[-3000:]}"
        )

    assert session.returncode == 0, diagnosis
    assert script.ask_tool is not None, diagnosis
    asked = [r.body for r in fake.requests if QUESTION in json.dumps(r.body.get("messages"))]
    assert len(asked) == 1, diagnosis
    assert "read-marker-2a9c" in json.dumps(asked[0]["messages"]), diagnosis
    assert stats["questions_answered"] == 1, stats
    results = [
        item
        for request in model.requests
        for item in request.items("function_call_output")
        if item.get("call_id") == "call-ask"
    ]
    assert results and ANSWER in json.dumps(results[-1]), diagnosis
    assert FINAL in session.stdout.decode(), diagnosis
