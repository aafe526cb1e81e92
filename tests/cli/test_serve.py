"""`live-memory serve`: the singleton lock, clear refusals, SIGTERM exits 0, SIGUSR1 dumps."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from live_memory.cli import ServeLock, ServeLockHeld
from live_memory.server_identity import identity_file, read_published
from tests.cli.conftest import clean_env, serve_argv
from tests.support import loopback
from tests.support.server_process import ServerProcess, free_port

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

REFUSAL_TIMEOUT_S = 30.0


def test_a_second_lock_on_the_same_port_fails_naming_the_holder(tmp_path: Path) -> None:
    with ServeLock.acquire(tmp_path, 7711) as held:
        assert held.path == tmp_path / "serve-7711.lock"
        assert held.path.read_text() == f"{os.getpid()}\n"
        with pytest.raises(ServeLockHeld) as refused:
            ServeLock.acquire(tmp_path, 7711)
    assert refused.value.pid == os.getpid()
    assert f"another live-memory server already holds port 7711 (pid {os.getpid()})" in str(
        refused.value
    )


def test_other_ports_are_independent_and_a_released_lock_is_free_again(tmp_path: Path) -> None:
    first = ServeLock.acquire(tmp_path / "data", 7711)
    other = ServeLock.acquire(tmp_path / "data", 7712)
    first.release()
    assert first.path.read_text() == ""  # a released lock names nobody
    again = ServeLock.acquire(tmp_path / "data", 7711)
    again.release()
    other.release()
    assert not first.held and not other.held


def test_a_second_real_server_on_the_port_exits_at_once_and_sigterm_exits_0(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    server = ServerProcess(data, {}).start()
    try:
        started = time.monotonic()
        second = subprocess.run(
            serve_argv("--port", str(server.port)),
            env=clean_env(tmp_path / "home", LIVE_MEMORY_DATA_DIR=str(data)),
            capture_output=True,
            text=True,
            timeout=REFUSAL_TIMEOUT_S,
            check=False,
        )
        elapsed = time.monotonic() - started
        assert second.returncode == 1
        assert server.proc is not None
        expected = f"another live-memory server already holds port {server.port} "
        assert f"{expected}(pid {server.proc.pid})" in second.stderr
        print(f"\nsecond `serve` refused in {elapsed:.2f} s")
        assert loopback.get(f"{server.url}/health", timeout=5).status_code == 200
        # The identity clients check is the running server's, untouched by the refused one.
        published = read_published(identity_file(os.environ, server.port))
        assert published is not None and published.pid == server.proc.pid
    finally:
        code = server.stop(signal.SIGTERM)
    assert code == 0
    assert not identity_file(os.environ, server.port).exists()  # withdrawn at a clean stop


def test_sigusr1_dumps_every_threads_stack_and_keeps_serving(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path / "data", {}).start()
    try:
        assert server.proc is not None
        os.kill(server.proc.pid, signal.SIGUSR1)
        # faulthandler writes from the C signal handler; a round trip after it has surely run.
        assert loopback.get(f"{server.url}/health", timeout=5).status_code == 200
    finally:
        assert server.stop() == 0
    log = server.log.read_text()
    assert "most recent call first" in log
    assert "Thread 0x" in log


def test_a_public_host_without_a_token_is_refused_with_exit_2(tmp_path: Path) -> None:
    done = subprocess.run(
        serve_argv("--host", "0.0.0.0", "--port", str(free_port())),
        env=clean_env(tmp_path / "home", LIVE_MEMORY_DATA_DIR=str(tmp_path / "data")),
        capture_output=True,
        text=True,
        timeout=REFUSAL_TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 2
    assert "refusing to bind 0.0.0.0: a non-loopback address needs LIVE_MEMORY_TOKEN" in done.stderr


def test_a_port_held_by_another_program_fails_clearly(tmp_path: Path) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen(1)
        port = squatter.getsockname()[1]
        done = subprocess.run(
            serve_argv("--port", str(port)),
            env=clean_env(tmp_path / "home", LIVE_MEMORY_DATA_DIR=str(tmp_path / "data")),
            capture_output=True,
            text=True,
            timeout=REFUSAL_TIMEOUT_S,
            check=False,
        )
    assert done.returncode == 1
    assert f"cannot listen on 127.0.0.1:{port}: Address already in use" in done.stderr


def test_an_invalid_setting_is_a_usage_error(tmp_path: Path) -> None:
    done = subprocess.run(
        serve_argv(),
        env=clean_env(tmp_path / "home", LIVE_MEMORY_PORT="0"),
        capture_output=True,
        text=True,
        timeout=REFUSAL_TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 2
    assert "LIVE_MEMORY_PORT" in done.stderr


def test_an_fd_that_is_not_a_socket_is_a_usage_error(tmp_path: Path) -> None:
    not_a_socket = tmp_path / "file"
    not_a_socket.write_text("x")
    with not_a_socket.open("rb") as handle:
        fd = handle.fileno()
        done = subprocess.run(
            serve_argv("--fd", str(fd)),
            env=clean_env(tmp_path / "home", LIVE_MEMORY_DATA_DIR=str(tmp_path / "data")),
            capture_output=True,
            text=True,
            timeout=REFUSAL_TIMEOUT_S,
            check=False,
            pass_fds=(fd,),
        )
    assert done.returncode == 2
    assert f"--fd {fd} is not" in done.stderr


def test_serve_prints_one_human_line_with_its_urls_and_what_to_set_without_a_model(
    tmp_path: Path,
) -> None:
    server = ServerProcess(tmp_path / "data", {}).start()
    try:
        lines = server.log.read_text().splitlines()
    finally:
        server.stop()
    human = [line for line in lines if line.startswith("live-memory serving at ")]
    assert len(human) == 1, lines
    assert f"http://127.0.0.1:{server.port} (MCP http://127.0.0.1:{server.port}/mcp)" in human[0]
    assert f"dashboard http://127.0.0.1:{server.port}/ui" in human[0]
    assert "; No model provider configured: set ANTHROPIC_API_KEY" in human[0]


def test_serve_names_the_provider_and_model_it_will_use(tmp_path: Path) -> None:
    env = {
        "LIVE_MEMORY_PROVIDER": "openai",
        "LIVE_MEMORY_BASE_URL": "http://127.0.0.1:9/v1",
        "LIVE_MEMORY_API_KEY": "sk-local",
        "LIVE_MEMORY_MODEL": "qwen2.5-coder",
    }
    server = ServerProcess(tmp_path / "data", env).start()
    try:
        text = server.log.read_text()
    finally:
        server.stop()
    assert "provider openai, model qwen2.5-coder at http://127.0.0.1:9/v1" in text
