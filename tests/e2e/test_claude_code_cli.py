"""The real Claude Code CLI, headless, with this plugin against a real `live-memory serve`.

The pinned `@anthropic-ai/claude-code` is installed from npm once per machine into
`<repo>/.cache/claude-code/<version>/` and reused. One FakeProvider plays both models, told apart
by system prompt: Claude Code's (via ANTHROPIC_BASE_URL) and Live Memory's own. Claude Code's
model is scripted to Read two files, Write one, wait while the test changes a watched file on
disk, call the plugin's `ask_live_memory` MCP tool, and finish.

Without node/npm the test skips locally and fails under CI=true; an npm failure always fails.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from subprocess import Popen
from typing import Any

import pytest

from tests.e2e.npm_cli import in_ci, locked
from tests.support.app_server import RunningServer
from tests.support.fakes import Call, FakeProvider, Recorded, Reply, Text, ToolUse
from tests.support.repo import make_repo
from tests.support.server_process import ServerProcess

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "plugin"
CACHE = REPO / ".cache" / "claude-code"
PACKAGE = "@anthropic-ai/claude-code"
VERSION = "2.1.332"
# A plugin's MCP server is namespaced `plugin_<plugin>_<server>` (not `mcp__live-memory__…`).
ASK_TOOL = "mcp__plugin_live-memory_live-memory__ask_live_memory"
LIVE_MEMORY_SYSTEM = "You are Live Memory"

INSTALL_TIMEOUT_S = 180.0
VERSION_TIMEOUT_S = 30.0
SESSION_TIMEOUT_S = 120.0
PAUSE_TIMEOUT_S = 60.0  # Claude Code's start-up, two turns and their hooks
# Its watcher waits for writes to settle, then runs the hook (a fresh python3), which posts to
# the server, which re-reads the file: seconds on a quiet machine, more under load. The wait
# ends as soon as the re-read is counted; the bound is only reached when something is wrong.
FILE_CHANGED_TIMEOUT_S = 60.0
POLL_S = 0.1

APP_SOURCE = "def answer():\n    return 'read-marker-7f3a'\n"
WATCHED_BEFORE = "watched before\n"
WATCHED_AFTER = "watched after: changed on disk mid-session\n"
OUT_TEXT = "write-marker-91c2\n"
QUESTION = "Where is answer() defined? (question-marker-c84b)"
ANSWER = "answer() is in src/app.py (answer-marker-5d1e)"
FINAL = "All done (final-marker-2b6e)"


def _working_cli(prefix: Path, node: str) -> list[str] | None:
    """The installed CLI when it runs and reports the pinned version, else None."""
    package = prefix / "node_modules" / "@anthropic-ai" / "claude-code"
    # The postinstall links the native binary over bin/claude.exe; should npm not run it,
    # the package's own wrapper finds and spawns the same binary.
    for command in (
        [str(prefix / "node_modules" / ".bin" / "claude")],
        [node, str(package / "cli-wrapper.cjs")],
    ):
        if not Path(command[-1]).exists():
            continue
        try:
            done = subprocess.run(
                [*command, "--version"],
                capture_output=True,
                text=True,
                timeout=VERSION_TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        if done.returncode == 0 and done.stdout.strip().startswith(VERSION):
            return command
    return None


def install_claude_code() -> list[str]:
    """The pinned CLI's command line, installed into the cache on first use."""
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None:
        reason = f"node and npm are needed to install {PACKAGE}@{VERSION} (Node.js >= 22)"
        if in_ci():
            pytest.fail(f"CI=true but {reason}; none on PATH")
        pytest.skip(reason)
    prefix = CACHE / VERSION
    with locked(CACHE / ".install.lock"):
        command = _working_cli(prefix, node)
        if command is not None:
            return command
        shutil.rmtree(prefix, ignore_errors=True)  # a half-finished install is not repaired
        prefix.mkdir(parents=True)
        install = [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund"]
        install += ["--loglevel=error", f"{PACKAGE}@{VERSION}"]
        try:
            done = subprocess.run(
                install, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S, check=False
            )
        except subprocess.TimeoutExpired:
            pytest.fail(f"`{' '.join(install)}` took over {INSTALL_TIMEOUT_S:.0f}s (registry?)")
        if done.returncode != 0:
            pytest.fail(
                f"`{' '.join(install)}` exited {done.returncode} (is the npm registry "
                f"reachable?):\n{_tail(done.stderr + done.stdout, 30)}"
            )
        command = _working_cli(prefix, node)
        if command is None:
            pytest.fail(f"{PACKAGE}@{VERSION} installed in {prefix} but `claude --version` fails")
        return command


class ScriptedSession:
    """The fake's responder: Claude Code's model follows the script; Live Memory's answers."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self.paused = threading.Event()
        """Set when Claude Code asks for the turn after its Write (the test may now edit)."""
        self.resume = threading.Event()
        """Set by the test once the on-disk change has been seen; the script goes on."""

    def respond(self, recorded: Recorded) -> Reply:
        if LIVE_MEMORY_SYSTEM in json.dumps(recorded.body.get("system")):
            return Text(ANSWER)
        if "Read" not in {tool.get("name") for tool in recorded.body.get("tools", [])}:
            return Text("ok")  # an auxiliary Claude Code call, not its agent loop
        turn = _finished_tool_turns(recorded.body.get("messages", []))
        if turn == 0:
            return ToolUse.several(
                Call("Read", {"file_path": str(self.repo / "src" / "app.py")}),
                Call("Read", {"file_path": str(self.repo / "watched.txt")}),
            )
        if turn == 1:
            return ToolUse("Write", {"file_path": str(self.repo / "out.txt"), "content": OUT_TEXT})
        if turn == 2:
            self.paused.set()
            # Blocks the fake's event loop, on purpose and bounded: Claude Code waits on this
            # turn and Live Memory makes no model call until the tool call below.
            self.resume.wait(PAUSE_TIMEOUT_S + FILE_CHANGED_TIMEOUT_S)
            return ToolUse(ASK_TOOL, {"question": QUESTION, "cwd": str(self.repo)})
        return Text(FINAL)


def _finished_tool_turns(messages: list[dict[str, Any]]) -> int:
    return sum(1 for m in messages if m.get("role") == "user" and _blocks(m, "tool_result"))


def _blocks(message: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    content = message.get("content")
    if not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, dict) and b.get("type") == kind]


def _tool_result_text(messages: list[dict[str, Any]], tool_name: str) -> str | None:
    """The text Claude Code sent its model as the result of its call to `tool_name`."""
    ids = {
        b.get("id")
        for m in messages
        if m.get("role") == "assistant"
        for b in _blocks(m, "tool_use")
        if b.get("name") == tool_name
    }
    for message in messages:
        for block in _blocks(message, "tool_result"):
            if block.get("tool_use_id") in ids:
                return json.dumps(block.get("content"), ensure_ascii=False)
    return None


def _tail(text: str, lines: int) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def _wait_until(check: Callable[[], bool], timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(POLL_S)  # another process's state: there is no event to wait on
    return check()


def _is_live_memory(recorded: Recorded) -> bool:
    return LIVE_MEMORY_SYSTEM in json.dumps(recorded.body.get("system"))


def _stats(server: RunningServer, repo: Path) -> dict[str, Any]:
    return dict(server.request("GET", "/stats", params={"cwd": str(repo)}).json())


def _file_contexts(server: RunningServer, repo: Path) -> dict[str, int]:
    return dict(_stats(server, repo).get("file_contexts") or {})


def _refreshed(server: RunningServer, repo: Path) -> int:
    return int((_stats(server, repo).get("freshness") or {}).get("refreshed", 0))


@contextmanager
def _launched(
    command: list[str], cwd: Path, env: dict[str, str], logs: Path
) -> Iterator[Popen[bytes]]:
    """Claude Code in its own process group, killed with everything it started if still running."""
    with (logs / "cc.out").open("wb") as out, (logs / "cc.err").open("wb") as err:
        process = Popen(command, cwd=cwd, env=env, stdout=out, stderr=err, start_new_session=True)
    try:
        yield process
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)


def _diagnosis(process: Popen[bytes], logs: Path, server: ServerProcess, fake: FakeProvider) -> str:
    """What went on, for failure messages: the CLI's output, its hook/MCP debug lines, the
    server log's tail and which side made each model request."""
    parts = [
        f"claude exit={process.poll()}",
        f"stderr:\n{_tail((logs / 'cc.err').read_text(errors='replace'), 40)}",
        f"stdout:\n{_tail((logs / 'cc.out').read_text(errors='replace'), 10)[-3000:]}",
    ]
    debug = logs / "cc-debug.log"
    if debug.exists():
        lines = debug.read_text(errors="replace").splitlines()
        picked = [line for line in lines if "hook" in line.lower() or "mcp" in line.lower()]
        parts.append("debug (hooks, mcp):\n" + "\n".join(picked[-40:]))
    parts.append(f"server log:\n{_tail(server.log.read_text(errors='replace'), 30)}")
    sides = ["live-memory" if _is_live_memory(r) else "claude-code" for r in fake.requests]
    parts.append(f"model requests: {sides}")
    return "\n\n".join(parts)


@pytest.mark.timeout(INSTALL_TIMEOUT_S + SESSION_TIMEOUT_S + 60)
def test_real_claude_code_tees_reads_writes_and_disk_changes_and_relays_answers(
    tmp_path: Path,
) -> None:
    cli = install_claude_code()
    home = tmp_path / "home"
    home.mkdir()
    base_env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        # Where the server publishes its identity, which the hooks check before sending.
        "XDG_RUNTIME_DIR": os.environ["XDG_RUNTIME_DIR"],
    }
    validate = subprocess.run(
        [*cli, "plugin", "validate", str(PLUGIN)],
        env=base_env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=VERSION_TIMEOUT_S,
        check=False,
    )
    assert validate.returncode == 0, f"plugin validate:\n{validate.stdout}\n{validate.stderr}"

    repo = make_repo(
        tmp_path / "repo",
        {"src/app.py": APP_SOURCE, "watched.txt": WATCHED_BEFORE, "README.md": "# demo\n"},
    )
    session = ScriptedSession(repo)
    command = [*cli, "-p", "Use the tools as you see fit.", "--plugin-dir", str(PLUGIN)]
    command += ["--allowedTools", f"Read,Write,Edit,{ASK_TOOL}", "--output-format", "json"]
    command += ["--no-session-persistence", "--debug-file", str(tmp_path / "cc-debug.log")]
    with FakeProvider() as fake:
        fake.responder = session.respond
        # The server's own watcher stays off: FileChanged is the only way a disk change arrives.
        server_env = {
            "ANTHROPIC_API_KEY": "dummy-key",
            "ANTHROPIC_BASE_URL": fake.url,
            "LIVE_MEMORY_WATCHER": "off",
        }
        with ServerProcess(tmp_path / "data", server_env) as server:
            # A repository Live Memory already knows: notifications for one it has neither
            # live state nor a snapshot of are ignored until its first question (design 3c).
            # (A reset, not a clear: its prompt block is frozen now, so what the hooks tee
            # reaches the question as an observation delta, as for any live workspace.)
            server.request("POST", "/reset", json={"cwd": str(repo)}).raise_for_status()
            cc_env = base_env | {
                "ANTHROPIC_API_KEY": "sk-ant-dummy-e2e",
                "ANTHROPIC_BASE_URL": fake.url,
                "LIVE_MEMORY_PORT": str(server.port),
            }
            with _launched(command, repo, cc_env, tmp_path) as process:
                changed = False
                try:
                    _wait_until(
                        lambda: session.paused.is_set() or process.poll() is not None,
                        PAUSE_TIMEOUT_S,
                    )
                    assert session.paused.is_set(), (
                        "Claude Code never asked for the turn after its Write\n"
                        + _diagnosis(process, tmp_path, server, fake)
                    )
                    before = _file_contexts(server, repo)
                    (repo / "watched.txt").write_text(WATCHED_AFTER, encoding="utf-8")
                    # The server re-reads a changed file whose content it holds (memory that
                    # stays true): the change is seen once that re-read is counted.
                    changed = _wait_until(
                        lambda: _refreshed(server, repo) >= 1, FILE_CHANGED_TIMEOUT_S
                    )
                finally:
                    session.resume.set()
                assert changed, "no FileChanged reached /notify\n" + _diagnosis(
                    process, tmp_path, server, fake
                )
                process.wait(timeout=SESSION_TIMEOUT_S)
            final_stats = _stats(server, repo)
            diagnosis = _diagnosis(process, tmp_path, server, fake)

    assert process.returncode == 0, diagnosis
    result = json.loads((tmp_path / "cc.out").read_text())
    assert result["is_error"] is False and result["result"] == FINAL, diagnosis
    assert result["permission_denials"] == [], diagnosis

    claude = [r.body for r in fake.requests if not _is_live_memory(r)]
    live_memory = [r.body for r in fake.requests if _is_live_memory(r)]
    # alwaysLoad: the MCP tool is connected before the first model request; SessionStart ran.
    assert ASK_TOOL in [tool["name"] for tool in claude[0]["tools"]], diagnosis
    assert "live-memory is running" in json.dumps(claude[0]), diagnosis

    # PostToolUse: both Reads and the Write reached /notify with their bytes.
    assert (before.get("with_content"), before.get("stale")) == (3, 0), (before, diagnosis)
    # FileChanged (the server's watcher is off): the server re-read the held file itself, so
    # it is current again with its new bytes, not merely flagged stale.
    assert final_stats["freshness"]["refreshed"] == 1, diagnosis
    assert final_stats["file_contexts"]["stale"] == 0, diagnosis

    # ask_live_memory: the question reached Live Memory's model, with what the hooks told it.
    asked = [body for body in live_memory if QUESTION in json.dumps(body["messages"])]
    assert len(asked) == 1, diagnosis
    seen = json.dumps(asked[0]["messages"], ensure_ascii=False)
    assert "read-marker-7f3a" in seen and "write-marker-91c2" in seen, seen
    assert WATCHED_AFTER.strip() in seen, seen  # the new bytes, with no tool call
    assert final_stats["questions_answered"] == 1, final_stats

    # And its answer, with the accounting trailer, went back to Claude Code's model.
    relayed = _tool_result_text(claude[-1]["messages"], ASK_TOOL)
    assert relayed is not None, diagnosis
    assert ANSWER in relayed and "[live-memory] model=" in relayed, relayed
