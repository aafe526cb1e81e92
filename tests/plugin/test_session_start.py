"""plugin/scripts/session-start.py: the server's banner, watch paths, the start backstop."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from live_memory.config import constants as C
from live_memory.knowledge import BANNER_PREFIX, health_banner
from tests.plugin.capture_server import CaptureServer, Seen, closed_port
from tests.plugin.conftest import REPO, SCRIPT_TIMEOUT_S, SCRIPTS, HookWorld, run_script
from tests.support.server_process import ServerProcess

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

HEALTH: dict[str, object] = {
    "status": "ok",
    "version": "0.1.0",
    "uptime_s": 12.0,
    "workspaces_active": 2,
    "workspaces_known": 12,
    "usage_today": {"questions": 3, "cost_usd": 0.0213},
    "transcripts": {"pending": 0, "processing": 0, "done": 7, "failed": 0},
}
DEGRADED = {**HEALTH, "transcripts": {"pending": 1, "processing": 0, "done": 4, "failed": 2}}
STATS: dict[str, object] = {"context": {"fill_pct": 41.0}}
# Rendered by the server's own code, so the hook is shown to print the server's words as they are.
HEALTHY_BANNER = health_banner(HEALTH, STATS)
DEGRADED_BANNER = health_banner(DEGRADED, STATS)


def _start_payload(world: HookWorld) -> str:
    return json.dumps(
        {"session_id": "s", "cwd": str(world.project), "hook_event_name": "SessionStart"}
    )


def _output(world: HookWorld, env: dict[str, str]) -> dict[str, object]:
    ran = run_script("session-start.py", _start_payload(world), env)
    assert ran.returncode == 0, ran.stderr
    output = json.loads(ran.stdout)
    assert isinstance(output, dict)
    return output


def _specific(output: dict[str, object]) -> dict[str, object]:
    specific = output["hookSpecificOutput"]
    assert isinstance(specific, dict)
    assert specific["hookEventName"] == "SessionStart"
    return specific


def _banner_server(banner: str, summary: str | None = None) -> CaptureServer:
    def respond(seen: Seen) -> tuple[int, object]:
        if seen.path == "/api/open":
            return 200, {"banner": banner, "summary": summary}
        return 404, {"error": f"unexpected {seen.path}"}

    return CaptureServer(respond=respond)


def _load_session_start() -> SimpleNamespace:
    namespace: dict[str, object] = {
        "__name__": "session_start_under_test",
        "__file__": str(SCRIPTS / "session-start.py"),
    }
    source = (SCRIPTS / "session-start.py").read_text(encoding="utf-8")
    exec(compile(source, "session-start.py", "exec"), namespace)
    return SimpleNamespace(**namespace)


def test_a_running_server_gives_its_banner_context_and_watch_paths(world: HookWorld) -> None:
    for name in (".git", "node_modules", "src", "build"):
        (world.project / name).mkdir()
    (world.project / ".env").write_text("SECRET=1\n")
    (world.project / "README.md").write_text("# demo\n")

    with _banner_server(HEALTHY_BANNER) as server:
        output = _output(world, world.at(server.port))
    (seen,) = server.requests  # one round trip: the banner answers "is it up" as well
    assert (seen.method, seen.path) == ("POST", "/api/open")
    assert json.loads(seen.body) == {"cwd": str(world.project), "summary": False}
    assert output["systemMessage"] == HEALTHY_BANNER
    assert output["systemMessage"] == (
        "live-memory: 3 questions today · $0.02 · window 41% · queue 0 pending · 12 workspaces"
    )
    specific = _specific(output)
    assert str(world.project) in specific["additionalContext"]
    assert "ask_live_memory" in specific["additionalContext"]
    assert "already knows" not in specific["additionalContext"]
    names = ["README.md", "input.txt", "out.txt", "src", "watched.txt"]
    assert specific["watchPaths"] == [str(world.project / name) for name in names]


def test_a_degraded_banner_is_printed_as_the_server_words_it(world: HookWorld) -> None:
    with _banner_server(DEGRADED_BANNER) as server:
        output = _output(world, world.at(server.port))
    assert output["systemMessage"] == DEGRADED_BANNER
    assert str(output["systemMessage"]).startswith("live-memory: ⚠ 2 transcripts failed · ")


def test_the_token_is_sent_with_the_banner_request(world: HookWorld) -> None:
    with _banner_server(HEALTHY_BANNER) as server:
        _output(world, {**world.at(server.port), "LIVE_MEMORY_TOKEN": "tok-1"})
    (seen,) = server.requests
    assert seen.headers["authorization"] == "Bearer tok-1"


@pytest.mark.parametrize("value", ["true", "TRUE", "1", "yes", " on "])
def test_the_opt_in_summary_is_asked_for_and_given_to_the_agent(
    world: HookWorld, value: str
) -> None:
    summary = "Ledger: 4 facts.\n- Sessions are signed with the key in src/auth/keys.py"
    with _banner_server(HEALTHY_BANNER, summary) as server:
        env = {**world.at(server.port), "LIVE_MEMORY_SESSION_SUMMARY": value}
        output = _output(world, env)
    (seen,) = server.requests
    assert json.loads(seen.body) == {"cwd": str(world.project), "summary": True}
    assert output["systemMessage"] == HEALTHY_BANNER
    context = str(_specific(output)["additionalContext"])
    assert "ask_live_memory" in context
    assert context.endswith(f"may be out of date):\n{summary}")


@pytest.mark.parametrize("value", ["", "false", "0", "no", "off", "maybe"])
def test_without_the_opt_in_no_summary_is_asked_for_or_shown(world: HookWorld, value: str) -> None:
    with _banner_server(HEALTHY_BANNER, "a summary nobody asked for") as server:
        env = {**world.at(server.port), "LIVE_MEMORY_SESSION_SUMMARY": value}
        output = _output(world, env)
    (seen,) = server.requests
    assert json.loads(seen.body) == {"cwd": str(world.project), "summary": False}
    assert "nobody asked for" not in str(_specific(output)["additionalContext"])


def test_a_long_summary_is_cut_to_the_bound(world: HookWorld) -> None:
    limit = _load_session_start().SUMMARY_MAX_CHARS
    summary = "word " * (limit // 2)
    with _banner_server(HEALTHY_BANNER, summary) as server:
        env = {**world.at(server.port), "LIVE_MEMORY_SESSION_SUMMARY": "true"}
        context = str(_specific(_output(world, env))["additionalContext"])
    shown = context.split("may be out of date):\n", 1)[1]
    assert len(shown) <= limit
    assert shown.endswith("…")
    assert summary.startswith(shown[:-1])


def test_a_server_without_the_banner_route_is_still_shown_running(world: HookWorld) -> None:
    def respond(seen: Seen) -> tuple[int, object]:
        return 404, {"error": "Not Found"}

    with CaptureServer(respond=respond) as server:
        output = _output(world, world.at(server.port))
    assert output["systemMessage"] == (
        f"live-memory: running at {server.url}, but POST /api/open answered HTTP 404"
    )
    assert "ask_live_memory tool" in str(_specific(output)["additionalContext"])


def test_the_down_line_is_word_for_word_the_servers(world: HookWorld) -> None:
    script = _load_session_start()
    assert script.BANNER_PREFIX == BANNER_PREFIX
    for env in ({}, {"LIVE_MEMORY_PORT": "7799"}, {"LIVE_MEMORY_HOST": "::"}):
        url = script.server_url(env)
        assert script.down_line(url) == health_banner(None, None, server_url=url)
    assert script.server_url({}) == f"http://{C.DEFAULT_HOST}:{C.DEFAULT_PORT}"
    assert script.down_line(script.server_url({})) == health_banner(None, None)


def test_no_server_and_no_cli_prints_the_down_line_and_what_to_install(
    world: HookWorld, tmp_path: Path
) -> None:
    empty_bin = tmp_path / "empty-bin"
    empty_bin.mkdir()
    port = closed_port()
    output = _output(world, {**world.at(port), "PATH": str(empty_bin)})
    down, why = str(output["systemMessage"]).split("\n")
    assert down == health_banner(None, None, server_url=f"http://127.0.0.1:{port}")
    assert why == (
        "live-memory: `live-memory` is not installed or not on PATH: from a clone of the "
        "live-memory repository run `make install-user`, then `live-memory install-service`"
    )
    specific = _specific(output)
    assert "unavailable" in specific["additionalContext"]
    assert specific["watchPaths"]


def test_the_banner_is_the_one_the_real_server_renders(world: HookWorld, tmp_path: Path) -> None:
    """Needs the server's POST /api/open (issue 35; the banner of issue 9)."""
    with ServerProcess(tmp_path / "server-data", {}) as server:
        env = {**world.at(server.port), "LIVE_MEMORY_SESSION_SUMMARY": "true"}
        output = _output(world, env)
        params = {"cwd": str(world.project), "summary": "1"}
        reply = server.request("GET", "/api/banner", params=params)
    assert reply.status_code == 200, reply.text
    expected = reply.json()
    assert output["systemMessage"] == expected["banner"]
    assert str(output["systemMessage"]).startswith(BANNER_PREFIX)
    assert "⚠ no model provider configured" in str(output["systemMessage"])


@pytest.fixture
def cli_on_path(tmp_path: Path) -> Path:
    """A `live-memory` executable that runs this checkout's CLI with this interpreter."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "live-memory"
    wrapper.write_text(
        f'#!/bin/sh\nPYTHONPATH="{REPO}" exec "{sys.executable}" -m live_memory.cli "$@"\n'
    )
    wrapper.chmod(0o755)
    return bin_dir


@pytest.fixture
def started_servers(world: HookWorld) -> Iterator[list[int]]:
    """Pids of servers the backstop started; each is stopped (SIGTERM) and awaited after."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        _terminate(pid)


def _terminate(pid: int) -> None:
    try:
        handle = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        os.kill(pid, signal.SIGTERM)
        readable, _, _ = select.select([handle], [], [], 30.0)  # readable once it has exited
        assert readable, f"server {pid} did not stop within 30 s of SIGTERM"
    finally:
        os.close(handle)


def test_two_sessions_starting_at_once_start_exactly_one_server(
    world: HookWorld, cli_on_path: Path, started_servers: list[int]
) -> None:
    port = closed_port()
    _service_env_file(world, f"LIVE_MEMORY_PORT={port}\n")
    env = {**world.at(port), "PATH": f"{cli_on_path}{os.pathsep}{world.env['PATH']}"}
    procs = [
        subprocess.Popen(
            [sys.executable, "-I", "-S", str(SCRIPTS / "session-start.py")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        for _ in range(2)
    ]
    outputs = [proc.communicate(_start_payload(world).encode(), SCRIPT_TIMEOUT_S) for proc in procs]
    # The backstop runs as the service would: its data dir, not Claude Code's plugin data.
    lock = _service_data(world) / f"serve-{port}.lock"
    if lock.exists() and lock.read_text().strip().isdigit():
        started_servers.append(int(lock.read_text()))
    for proc, (out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err
        banner = json.loads(out)["systemMessage"]
        assert banner.startswith(BANNER_PREFIX) and "not running" not in banner, banner
    assert len(started_servers) == 1
    log = (world.data / "serve.log").read_text()
    assert log.count("live-memory serving on") == 1, log
    assert "already holds" not in log


def _service_data(world: HookWorld) -> Path:
    return Path(world.env["HOME"]) / ".local" / "share" / "live-memory"


def _service_env_file(world: HookWorld, text: str) -> None:
    path = Path(world.env["HOME"]) / ".config" / "live-memory" / "env"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_a_backstop_started_server_is_the_services_twin_and_the_banner_says_so(
    world: HookWorld, cli_on_path: Path, started_servers: list[int]
) -> None:
    """Claude Code's own provider settings and plugin data dir do not leak into the server:
    it takes the service's env file; the banner and context say the tool comes next session."""
    port = closed_port()
    _service_env_file(
        world,
        "# the service's settings\n"
        "LIVE_MEMORY_PROVIDER=openai\n"
        "LIVE_MEMORY_BASE_URL=http://127.0.0.1:9/v1\n"
        'LIVE_MEMORY_API_KEY="sk-service-key"\n'
        "LIVE_MEMORY_MODEL=service-model\n"
        f"LIVE_MEMORY_PORT={port}\n",
    )
    env = {
        **world.at(port),
        "PATH": f"{cli_on_path}{os.pathsep}{world.env['PATH']}",
        "ANTHROPIC_API_KEY": "sk-ant-api03-" + "c" * 40,  # Claude Code's, not the service's
        "LIVE_MEMORY_MODEL": "claude-code-model",
    }
    output = _output(world, env)
    lock = _service_data(world) / f"serve-{port}.lock"
    assert lock.exists(), output
    started_servers.append(int(lock.read_text()))
    banner, started = str(output["systemMessage"]).split("\n")
    assert banner.startswith(BANNER_PREFIX) and "not running" not in banner
    assert started.startswith(f"{BANNER_PREFIX}started `live-memory serve --as-service` (pid ")
    assert started.endswith(
        "to keep it running: `live-memory install-service`; the ask_live_memory tool connects "
        "from the next session at the latest (Claude Code connected its MCP servers before this "
        "hook started the server)"
    )
    context = str(_specific(output)["additionalContext"])
    assert "most likely not connected in this session: do not try to call it" in context
    assert "call the ask_live_memory tool" not in context
    health = ServerProcess(world.data, {}, port=port).request("GET", "/health").json()
    assert health["data_dir"] == str(_service_data(world))
    assert (health["provider"], health["model"]) == ("openai", "service-model")


def test_a_backstop_that_cannot_be_the_services_twin_refuses_clearly(
    world: HookWorld, cli_on_path: Path
) -> None:
    port = closed_port()
    _service_env_file(world, "LIVE_MEMORY_PORT=7799\n")
    env = {**world.at(port), "PATH": f"{cli_on_path}{os.pathsep}{world.env['PATH']}"}
    output = _output(world, env)
    down, why = str(output["systemMessage"]).split("\n")
    assert down == health_banner(None, None, server_url=f"http://127.0.0.1:{port}")
    assert why == (
        f"{BANNER_PREFIX}`live-memory serve` exited 2: live-memory: refusing to start as the "
        "service: the service is configured with LIVE_MEMORY_PORT=7799 "
        f"({Path(world.env['HOME']) / '.config' / 'live-memory' / 'env'}) but this session "
        f"expects {port}: set LIVE_MEMORY_PORT to the same value in both"
    )
    assert "unavailable" in str(_specific(output)["additionalContext"])


def test_an_installed_service_is_asked_first_and_the_backstop_starts_when_it_cannot(
    world: HookWorld, cli_on_path: Path, tmp_path: Path, started_servers: list[int]
) -> None:
    """A systemd user unit is the primary path: the hook asks systemctl first. Where its
    manager cannot start it (no user bus: a container, WSL, SSH), the hook still starts
    `live-memory serve --as-service`, as the README says, and the banner says both."""
    unit = Path(world.env["HOME"]) / ".config" / "systemd" / "user" / "live-memory.service"
    unit.parent.mkdir(parents=True)
    unit.write_text("[Service]\n")
    tools = tmp_path / "tools"
    tools.mkdir()
    calls = tmp_path / "systemctl.calls"
    fake = tools / "systemctl"  # no user systemd in the test machine: record and refuse
    fake.write_text(
        f'#!/bin/sh\necho "$@" >> "{calls}"\n'
        'echo "Failed to connect to bus: No medium found" >&2\nexit 1\n'
    )
    fake.chmod(0o755)
    port = closed_port()
    _service_env_file(world, f"LIVE_MEMORY_PORT={port}\n")
    path = f"{tools}{os.pathsep}{cli_on_path}{os.pathsep}{world.env['PATH']}"
    output = _output(world, {**world.at(port), "PATH": path})
    assert calls.read_text() == "--user start live-memory.service\n"
    lock = _service_data(world) / f"serve-{port}.lock"
    assert lock.exists(), output
    started_servers.append(int(lock.read_text()))
    banner, started = str(output["systemMessage"]).split("\n")
    assert "not running" not in banner
    assert started.startswith(f"{BANNER_PREFIX}started `live-memory serve --as-service` (pid ")
    assert (
        "(the live-memory service is installed but `systemctl --user start "
        "live-memory.service` failed: Failed to connect to bus: No medium found)"
    ) in started
