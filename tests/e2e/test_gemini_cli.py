"""The real Gemini CLI, headless, connected by `live-memory connect gemini` to a real
`live-memory serve`, its model a fake Gemini API (tests/support/fakes/fake_gemini.py).

The pinned `@google/gemini-cli` is installed from npm once into `.cache/gemini-cli/<version>/`.
Its model is scripted to read a file with `read_file`, then call `ask_live_memory`, then
finish. Nothing tells the server about the repository beforehand: the SessionStart hook opens
the workspace, the AfterTool hook tees the read, and the question sees the file's bytes.
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
from tests.support.fakes import FakeProvider, Recorded, Reply, Text
from tests.support.fakes.fake_gemini import FakeGemini, GeminiRequest
from tests.support.repo import make_repo
from tests.support.server_process import ServerProcess

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

VERSION = "0.61.0"
SESSION_TIMEOUT_S = 180.0
LIVE_MEMORY_SYSTEM = "You are Live Memory"
APP_SOURCE = "def answer():\n    return 'read-marker-6d2f'\n"
QUESTION = "Where is answer() defined? (question-marker-19ab)"
ANSWER = "answer() is in src/app.py (answer-marker-3c7e)"
FINAL = "All done (final-marker-8e41)"


class Script:
    """Gemini CLI's model: read_file, then ask_live_memory, then a final text."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self.ask_tool: str | None = None

    def respond(self, request: GeminiRequest) -> list[dict[str, Any]]:
        names = request.function_names
        asks = [name for name in names if name.endswith("ask_live_memory")]
        if "read_file" not in names or not asks:
            return [{"text": '{"reasoning": "done", "next_speaker": "user"}'}]  # auxiliary
        self.ask_tool = asks[0]
        done = len(request.function_responses())
        if done == 0:
            path = str(self.repo / "src" / "app.py")
            return [{"functionCall": {"name": "read_file", "args": {"file_path": path}}}]
        if done == 1:
            args = {"question": QUESTION, "cwd": str(self.repo)}
            return [{"functionCall": {"name": asks[0], "args": args}}]
        return [{"text": FINAL}]


def _live_memory(recorded: Recorded) -> Reply:
    return Text(ANSWER)


def _connect(env: dict[str, str]) -> str:
    out, err = io.StringIO(), io.StringIO()
    code = cli_run(["connect", "gemini"], env, out, err)
    assert code == 0, err.getvalue()
    return out.getvalue()


@pytest.mark.timeout(600)
def test_real_gemini_cli_tees_its_read_before_asking_live_memory(tmp_path: Path) -> None:
    gemini = install_npm_cli("gemini-cli", "@google/gemini-cli", VERSION, "gemini")
    home = tmp_path / "home"
    home.mkdir()
    repo = make_repo(tmp_path / "repo", {"src/app.py": APP_SOURCE, "README.md": "# demo\n"})
    script = Script(repo)
    with (
        FakeProvider() as fake,
        FakeGemini(script.respond) as model,
        ServerProcess(
            tmp_path / "data",
            {
                "ANTHROPIC_API_KEY": "dummy-key",
                "ANTHROPIC_BASE_URL": fake.url,
                "LIVE_MEMORY_WATCHER": "off",
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
        # The user's own settings first (an API key, not the gateway GOOGLE_GEMINI_BASE_URL
        # would select): connect merges with them.
        settings = home / ".gemini" / "settings.json"
        settings.parent.mkdir()
        settings.write_text(json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}}))
        _connect({**env, "LIVE_MEMORY_DATA_DIR": str(tmp_path / "cli-data")})
        gemini_env = env | {
            "GEMINI_API_KEY": "dummy-gemini-key",
            "GOOGLE_GEMINI_BASE_URL": model.url,
            "GEMINI_CLI_NO_RELAUNCH": "true",
            "GEMINI_CLI_TRUST_WORKSPACE": "true",  # else --yolo falls back to asking
            "NO_BROWSER": "true",
        }
        command = [*gemini, "-p", "Use the tools as you see fit.", "--yolo"]
        command += ["--output-format", "json"]
        session = run_session(
            command, cwd=repo, env=gemini_env, timeout_s=SESSION_TIMEOUT_S, stdin=None
        )
        stats = server.request("GET", "/stats", params={"cwd": str(repo)}).json()
        calls = [
            (r.method, r.function_names[:3], len(r.function_responses())) for r in model.requests
        ]
        diagnosis = (
            f"gemini exit={session.returncode}\nstderr:\n{session.stderr.decode()[-4000:]}\n"
            f"stdout:\n{session.stdout.decode()[-3000:]}\nmodel calls: {calls}"
            f"\nserver log:\n{server.log.read_text(errors='replace')[-3000:]}"
        )

    assert session.returncode == 0, diagnosis
    assert script.ask_tool is not None, diagnosis
    # The question reached Live Memory's model, with the file the read teed.
    asked = [r.body for r in fake.requests if QUESTION in json.dumps(r.body.get("messages"))]
    assert len(asked) == 1, diagnosis
    assert "read-marker-6d2f" in json.dumps(asked[0]["messages"]), diagnosis
    assert stats["questions_answered"] == 1, stats
    # Its answer went back to Gemini CLI's model as the tool's result.
    results = [
        response
        for request in model.requests
        for response in request.function_responses()
        if response.get("name") == script.ask_tool
    ]
    assert results and ANSWER in json.dumps(results[-1]), diagnosis
    assert FINAL in session.stdout.decode(), diagnosis
