"""The README's walkthrough, followed as a new user would, from a clean clone.

`make install-user` in a fresh clone and a fresh HOME (the private-venv fallback: no pipx, no
uv, no published package), `live-memory` found on PATH by a fresh shell, `live-memory serve` on
a free port, the plugin registered the README's way (`claude plugin marketplace add` + `claude
plugin install`, not `--plugin-dir`), then two `claude -p` sessions of the real Claude Code CLI
against the scripted fake provider:

1. with the server running: the tool is connected and its answer comes back to the agent;
2. with the server stopped: the session-start hook starts the backstop, the banner says the tool
   connects from the next session, the agent is told not to call it (and it is not connected),
   and the session ends without hanging.

The Claude Code CLI is installed and driven with the machinery of test_claude_code_cli.py (same
pinned version and cache). Slow: one install (about a minute) and two short sessions.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time
from pathlib import Path
from subprocess import Popen
from typing import Any

import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from live_memory import __version__
from tests.e2e.test_claude_code_cli import (
    ASK_TOOL,
    INSTALL_TIMEOUT_S,
    SESSION_TIMEOUT_S,
    _is_live_memory,
    _launched,
    _tail,
    _tool_result_text,
    install_claude_code,
)
from tests.support import loopback
from tests.support.fakes import FakeProvider, Recorded, Reply, Text, ToolUse
from tests.support.server_process import free_port

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
USER_INSTALL_TIMEOUT_S = 600.0
START_TIMEOUT_S = 60.0
COMMAND_TIMEOUT_S = 60.0
QUESTION = "Where is answer() defined? (walkthrough-q-41c9)"
ANSWER = "answer() is in src/app.py (walkthrough-a-7e20)"
FINAL = "Done (walkthrough-final-03bd)"
NEXT_SESSION = "the ask_live_memory tool connects from the next session at the latest"


def _run(argv: list[str], env: dict[str, str], cwd: Path, timeout_s: float) -> str:
    done = subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout_s, check=False
    )
    assert done.returncode == 0, f"{argv} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


def _user_env(home: Path) -> dict[str, str]:
    """A new user's shell: their HOME, ~/.local/bin on PATH, none of this test's Python."""
    system_path = [p for p in os.environ.get("PATH", "/usr/bin:/bin").split(os.pathsep)]
    system_path = [p for p in system_path if not p.startswith(str(REPO)) and ".venv" not in p]
    return {
        "HOME": str(home),
        "PATH": os.pathsep.join([str(home / ".local" / "bin"), *system_path]),
        "LANG": "C.UTF-8",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
    }


def _wait_health(url: str, process: Popen[bytes], log: Path) -> dict[str, Any]:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        assert process.poll() is None, f"serve exited {process.returncode}:\n{log.read_text()}"
        try:
            reply = loopback.get(f"{url}/health", timeout=1.0)
            if reply.status_code == 200:
                return dict(reply.json())
        except httpx.HTTPError:
            pass
        time.sleep(0.1)  # a starting process: there is no event to wait on
    raise AssertionError(f"serve did not answer within {START_TIMEOUT_S:.0f} s:\n{log.read_text()}")


async def _server_info_version(url: str) -> str:
    async with (
        streamable_http_client(f"{url}/mcp") as (read, write),
        ClientSession(read, write) as session,
    ):
        result = await session.initialize()
        return str(result.server_info.version)


class Script:
    """Claude Code's model asks the tool once when it is offered, then finishes; Live Memory's
    model answers."""

    def respond(self, recorded: Recorded) -> Reply:
        if _is_live_memory(recorded):
            return Text(ANSWER)
        tools = {tool.get("name") for tool in recorded.body.get("tools", [])}
        if "Read" not in tools:
            return Text("ok")  # an auxiliary Claude Code call, not its agent loop
        messages = recorded.body.get("messages", [])
        if self.ask and ASK_TOOL in tools and _tool_result_text(messages, ASK_TOOL) is None:
            return ToolUse(ASK_TOOL, {"question": QUESTION, "cwd": self.repo})
        return Text(FINAL)

    def __init__(self, repo: Path) -> None:
        self.repo = str(repo)
        self.ask = True
        """False for the second session: its agent was told not to call the tool."""


def _session(
    cli: list[str], repo: Path, env: dict[str, str], logs: Path, name: str
) -> tuple[int, list[dict[str, Any]], float]:
    """One `claude -p` run: (exit code, its stream-json events, seconds it took)."""
    logs.mkdir(parents=True, exist_ok=True)
    command = [*cli, "-p", "Answer the user's question.", "--allowedTools", f"Read,{ASK_TOOL}"]
    command += ["--output-format", "stream-json", "--verbose", "--no-session-persistence"]
    command += ["--debug-file", str(logs / f"{name}-debug.log")]
    started = time.monotonic()
    with _launched(command, repo, env, logs) as process:
        process.wait(timeout=SESSION_TIMEOUT_S)
    took = time.monotonic() - started
    (logs / "cc.out").rename(logs / f"{name}.out")
    (logs / "cc.err").rename(logs / f"{name}.err")
    events = []
    for line in (logs / f"{name}.out").read_text(errors="replace").splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            continue
    return int(process.returncode), events, took


def _diagnosis(logs: Path, name: str, fake: FakeProvider) -> str:
    parts = [f"stderr:\n{_tail((logs / f'{name}.err').read_text(errors='replace'), 30)}"]
    parts.append(f"stdout:\n{_tail((logs / f'{name}.out').read_text(errors='replace'), 20)}")
    debug = logs / f"{name}-debug.log"
    if debug.exists():
        lines = debug.read_text(errors="replace").splitlines()
        picked = [line for line in lines if "hook" in line.lower() or "mcp" in line.lower()]
        parts.append("debug (hooks, mcp):\n" + "\n".join(picked[-40:]))
    sides = ["live-memory" if _is_live_memory(r) else "claude-code" for r in fake.requests]
    parts.append(f"model requests: {sides}")
    return "\n\n".join(parts)


_WHY_NEXT = " (Claude Code connected its MCP servers before this hook started the server)"
_NOT_ANSWERING_YET = "but it is not answering yet"


def _lock_pid(lock: Path) -> int | None:
    """The pid a serve lock names, if it names one yet."""
    try:
        return int(lock.read_text())
    except (OSError, ValueError):
        return None


def _wait_until_answering(url: str) -> None:
    """/health answers within START_TIMEOUT_S (a process this test did not start)."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        try:
            if loopback.get(f"{url}/health", timeout=1.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)  # another process starting: there is no event to wait on
    raise AssertionError(f"the backstop at {url} did not answer within {START_TIMEOUT_S:.0f} s")


def _start_hook_output(events: list[dict[str, Any]]) -> dict[str, Any]:
    """What the SessionStart hook printed, as Claude Code reported it in its stream."""
    for event in events:
        if (event.get("type"), event.get("subtype")) == ("system", "hook_response"):
            output = json.loads(event.get("output") or "{}")
            if "systemMessage" in output:
                return dict(output)
    raise AssertionError("no SessionStart hook_response in the stream")


def _agent_requests(fake: FakeProvider, since: int) -> list[dict[str, Any]]:
    return [
        r.body
        for r in fake.requests[since:]
        if not _is_live_memory(r) and "Read" in {t.get("name") for t in r.body.get("tools", [])}
    ]


@pytest.mark.timeout(INSTALL_TIMEOUT_S + USER_INSTALL_TIMEOUT_S + 3 * SESSION_TIMEOUT_S + 120)
def test_the_readme_walkthrough_from_a_clean_clone(tmp_path: Path) -> None:
    cli = install_claude_code()
    home, logs = tmp_path / "home", tmp_path / "logs"
    home.mkdir()
    clone = tmp_path / "live-memory"
    _run(["git", "clone", "-q", str(REPO), str(clone)], os.environ.copy(), tmp_path, 120)
    user = _user_env(home)

    # `make install-user`, the fallback a machine without pipx or uv gets.
    installed = _run(
        ["make", "install-user"],
        {**user, "LIVE_MEMORY_INSTALL_METHOD": "venv"},
        clone,
        USER_INSTALL_TIMEOUT_S,
    )
    assert f"installed live-memory {__version__} as {home}/.local/bin/live-memory" in installed
    # A fresh shell finds it on PATH.
    found = _run(["sh", "-c", "command -v live-memory && live-memory --version"], user, home, 60)
    assert found.splitlines() == [f"{home}/.local/bin/live-memory", f"live-memory {__version__}"]

    repo = clone  # any repository will do: ask about the clone itself
    port = free_port()
    with FakeProvider() as fake:
        script = Script(repo)
        fake.responder = script.respond
        provider = {"ANTHROPIC_API_KEY": "sk-ant-dummy-walkthrough", "ANTHROPIC_BASE_URL": fake.url}
        session_env = {**user, **provider, "LIVE_MEMORY_PORT": str(port)}
        # The service's settings, where `live-memory install-service` tells the user to put them.
        service_env = home / ".config" / "live-memory" / "env"
        service_env.parent.mkdir(parents=True)
        service_env.write_text(
            "".join(f"{k}={v}\n" for k, v in {**provider, "LIVE_MEMORY_PORT": port}.items())
        )

        # `live-memory serve`, in a terminal of its own.
        serve_log = tmp_path / "serve.log"
        with serve_log.open("wb") as log:
            serve = Popen(
                ["live-memory", "serve"],
                env=session_env,
                cwd=home,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        try:
            url = f"http://127.0.0.1:{port}"
            health = _wait_health(url, serve, serve_log)
            assert health["version"] == __version__
            assert asyncio.run(_server_info_version(url)) == __version__
            status = _run(["live-memory", "status"], session_env, home, COMMAND_TIMEOUT_S)
            assert status.startswith(f"live-memory {__version__} at {url}: ok")

            # The plugin, the README's way.
            marketplace = _run(
                [*cli, "plugin", "marketplace", "add", str(clone)], user, home, COMMAND_TIMEOUT_S
            )
            plugin = _run(
                [*cli, "plugin", "install", "live-memory@live-memory"],
                user,
                home,
                COMMAND_TIMEOUT_S,
            )

            # Session 1: the server runs; the tool is connected and answers.
            first = len(fake.requests)
            code, events, _ = _session(cli, repo, session_env, logs, "running")
            why = _diagnosis(logs, "running", fake) + f"\n{marketplace}\n{plugin}"
            assert code == 0, why
            init = next(
                e for e in events if (e.get("type"), e.get("subtype")) == ("system", "init")
            )
            servers = {s.get("name"): s.get("status") for s in init.get("mcp_servers", [])}
            assert servers.get("plugin:live-memory:live-memory") == "connected", (servers, why)
            agent = _agent_requests(fake, first)
            assert ASK_TOOL in [tool["name"] for tool in agent[0]["tools"]], why
            assert "live-memory is running" in json.dumps(agent[0]), why
            assert "\n" not in _start_hook_output(events)["systemMessage"], why  # just the banner
            relayed = _tool_result_text(agent[-1]["messages"], ASK_TOOL)
            assert relayed is not None and ANSWER in relayed, why
            assert "[live-memory] model=" in relayed, relayed
            result = next(e for e in events if e.get("type") == "result")
            assert result["result"] == FINAL, why
        finally:
            serve.terminate()
            serve.wait(timeout=60)

        # Session 2: the server is stopped. The hook starts the backstop; the tool is not
        # connected in this session and the banner and the agent's context say so.
        script.ask = False
        second = len(fake.requests)
        code, events, took = _session(cli, repo, session_env, logs, "stopped")
        why = _diagnosis(logs, "stopped", fake)
        lock = home / ".local" / "share" / "live-memory" / f"serve-{port}.lock"
        backstop = _lock_pid(lock)
        try:
            assert code == 0, why
            assert took < SESSION_TIMEOUT_S, why  # nothing hangs
            init = next(
                e for e in events if (e.get("type"), e.get("subtype")) == ("system", "init")
            )
            servers = {s.get("name"): s.get("status") for s in init.get("mcp_servers", [])}
            # Usually "failed" (Claude Code connects while the hook runs); on a loaded machine
            # its connection can come after the backstop is up, hence "most likely" in the text.
            assert servers.get("plugin:live-memory:live-memory") in ("failed", "connected"), why
            banner = _start_hook_output(events)["systemMessage"]  # what the user sees
            agent = _agent_requests(fake, second)
            context = json.dumps(agent[0])
            assert "call the ask_live_memory tool" not in context, why
            if banner.endswith(_NOT_ANSWERING_YET):
                # The hook waits a bounded time for the backstop (START_WAIT_S in
                # session-start.py); a loaded machine can take longer to start a fresh
                # interpreter. Then it says so and the agent is told the tool is unavailable.
                assert "ask_live_memory is unavailable" in context, why
                _wait_until_answering(f"http://127.0.0.1:{port}")  # it does come up
                backstop = _lock_pid(lock)  # written before it serves
                assert f"started `live-memory serve` (pid {backstop})" in banner, (banner, why)
            else:
                assert banner.splitlines()[-1].endswith(NEXT_SESSION + _WHY_NEXT), (banner, why)
                assert "to keep it running: `live-memory install-service`" in banner, why
                assert "most likely not connected in this session: do not try to call it" in (
                    context
                )
            offered = ASK_TOOL in [tool["name"] for tool in agent[0]["tools"]]
            assert offered == (servers["plugin:live-memory:live-memory"] == "connected"), why
            assert _tool_result_text(agent[-1]["messages"], ASK_TOOL) is None, why  # not called
            result = next(e for e in events if e.get("type") == "result")
            assert result["result"] == FINAL, why
            # The backstop is the service's twin: the service's data dir, answering now.
            assert backstop is not None, why
            health = loopback.get(f"http://127.0.0.1:{port}/health", timeout=5).json()
            assert health["data_dir"] == str(home / ".local" / "share" / "live-memory")
        finally:
            backstop = backstop or _lock_pid(lock)
            if backstop is not None:
                os.kill(backstop, 15)
