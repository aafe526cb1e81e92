"""plugin/scripts/session-start.py: banner, watch paths, and the start-the-server backstop."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.plugin.capture_server import CaptureServer, Seen, closed_port
from tests.plugin.conftest import REPO, SCRIPT_TIMEOUT_S, SCRIPTS, HookWorld, run_script

HEALTH = {
    "status": "ok",
    "version": "0.1.0",
    "uptime_s": 12.0,
    "workspaces_active": 1,
    "provider": "anthropic",
    "model": "claude-haiku-4-5",
}
STATS = {"context": {"fill_pct": 42.5}, "cost_usd": 0.3125, "questions_answered": 7}


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


def test_a_running_server_gives_a_banner_context_and_watch_paths(world: HookWorld) -> None:
    for name in (".git", "node_modules", "src", "build"):
        (world.project / name).mkdir()
    (world.project / ".env").write_text("SECRET=1\n")
    (world.project / "README.md").write_text("# demo\n")

    def respond(seen: Seen) -> tuple[int, object]:
        return (200, HEALTH) if seen.path == "/health" else (200, STATS)

    with CaptureServer(respond=respond) as server:
        output = _output(world, world.at(server.port))
        stats_request = server.wait_for(2)[1]
    assert stats_request.path == "/stats"
    assert stats_request.query == {"cwd": str(world.project)}
    banner = output["systemMessage"]
    assert banner == (
        "live-memory 0.1.0 · anthropic/claude-haiku-4-5 · this repo: 42.5% of window · "
        "7 answers · $0.31"
    )
    specific = output["hookSpecificOutput"]
    assert isinstance(specific, dict)
    assert specific["hookEventName"] == "SessionStart"
    assert str(world.project) in specific["additionalContext"]
    assert "ask_live_memory" in specific["additionalContext"]
    names = ["README.md", "input.txt", "out.txt", "src", "watched.txt"]
    assert specific["watchPaths"] == [str(world.project / name) for name in names]


def test_a_new_workspace_and_a_missing_provider_are_shown_plainly(world: HookWorld) -> None:
    health = {**HEALTH, "status": "no_provider", "provider": None, "model": None}
    health["problem"] = "No model provider configured: set ANTHROPIC_API_KEY"

    def respond(seen: Seen) -> tuple[int, object]:
        if seen.path == "/health":
            return 200, health
        return 404, {"error": "no memory for workspace"}

    with CaptureServer(respond=respond) as server:
        banner = _output(world, world.at(server.port))["systemMessage"]
    assert banner == (
        "live-memory 0.1.0 · ⚠ No model provider configured: set ANTHROPIC_API_KEY · this repo: new"
    )


def test_no_server_and_no_cli_still_exits_0_and_says_what_to_install(
    world: HookWorld, tmp_path: Path
) -> None:
    empty_bin = tmp_path / "empty-bin"
    empty_bin.mkdir()
    port = closed_port()
    output = _output(world, {**world.at(port), "PATH": str(empty_bin)})
    banner = output["systemMessage"]
    assert isinstance(banner, str)
    assert f"not running at http://127.0.0.1:{port}" in banner
    assert "not installed" in banner
    specific = output["hookSpecificOutput"]
    assert isinstance(specific, dict)
    assert "unavailable" in specific["additionalContext"]
    assert specific["watchPaths"]


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
    lock = world.data / f"serve-{port}.lock"
    if lock.exists() and lock.read_text().strip().isdigit():
        started_servers.append(int(lock.read_text()))
    for proc, (out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err
        banner = json.loads(out)["systemMessage"]
        assert banner.startswith("live-memory 0.1.0 · "), banner
    assert len(started_servers) == 1
    log = (world.data / "serve.log").read_text()
    assert log.count("live-memory serving on") == 1, log
    assert "already holds" not in log
