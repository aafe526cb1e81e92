"""`live-memory ask` on a terminal shows what the question is doing while it runs.

The real CLI in a pseudo-terminal against the whole app and the replaying fake of a local
model server; the fake holds its answer until the terminal has shown a progress line."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.conftest import clean_env
from tests.support.app_server import AppServer
from tests.support.fakes import FakeLocalServer, Says, WritesCall
from tests.support.repo import make_repo

pytestmark = pytest.mark.e2e

ANSWER = "ArgumentParser in src/app.py parses the options."
WAIT_S = 120.0


@pytest.fixture
def local_model(tmp_path: Path) -> Iterator[tuple[FakeLocalServer, AppServer, Path]]:
    repo = make_repo(tmp_path / "repo", {"src/app.py": "class ArgumentParser:\n    pass\n"})
    with FakeLocalServer(flavour="llama-server", n_ctx=8192, default=Says(ANSWER)) as fake:
        env = {
            "LIVE_MEMORY_PROVIDER": "openai",
            "LIVE_MEMORY_BASE_URL": fake.openai_base_url,
            "LIVE_MEMORY_MODEL": fake.model,
        }
        with AppServer(tmp_path / "data", env) as server:
            yield fake, server, repo


def _read_terminal(fd: int, seen: list[bytes], progressed: threading.Event) -> None:
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # the CLI exited and closed its side
            return
        if not chunk:
            return
        seen.append(chunk)
        if b"s: model call" in b"".join(seen):
            progressed.set()


def test_ask_on_a_terminal_shows_elapsed_time_and_what_it_is_doing(
    local_model: tuple[FakeLocalServer, AppServer, Path], tmp_path: Path
) -> None:
    fake, server, repo = local_model
    progressed = threading.Event()
    fake.script(WritesCall("Grep", {"pattern": "ArgumentParser"}), Says(ANSWER, hold=progressed))
    leader, follower = os.openpty()
    seen: list[bytes] = []
    reader = threading.Thread(target=_read_terminal, args=(leader, seen, progressed))
    reader.start()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "live_memory.cli", "ask", "Which module parses options?"],
            env=clean_env(tmp_path / "home", LIVE_MEMORY_PORT=str(server.port)),
            cwd=repo,
            stdout=subprocess.PIPE,
            stderr=follower,
            timeout=WAIT_S,
            check=False,
        )
    finally:
        os.close(follower)
        reader.join(WAIT_S)
        os.close(leader)
    terminal = b"".join(seen).decode("utf-8", "replace")
    assert done.returncode == 0, terminal
    assert ANSWER in done.stdout.decode()
    assert progressed.is_set(), terminal  # the answer was released by a progress line
    assert "s: model call" in terminal
    assert terminal.endswith("\r\x1b[2K")  # the line is erased before the answer


def test_ask_without_a_terminal_prints_only_the_answer(
    local_model: tuple[FakeLocalServer, AppServer, Path], tmp_path: Path
) -> None:
    _, server, repo = local_model
    done = subprocess.run(
        [sys.executable, "-m", "live_memory.cli", "ask", "Which module parses options?"],
        env=clean_env(tmp_path / "home", LIVE_MEMORY_PORT=str(server.port)),
        cwd=repo,
        capture_output=True,
        timeout=WAIT_S,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert ANSWER in done.stdout.decode() and done.stderr == b""
