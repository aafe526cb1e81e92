"""The server drains the plugin's spool itself: at start, and when a session names it, in order,
once; the spool's lines are what plugin/scripts/notify.py writes while the server is down.

The drain at start is the app's lifespan, so each "start" here is the app served in process
(`AppServer`) on the same data dir: no fresh interpreter per start. test_notify_spool starts
`live-memory serve` itself after an outage."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from tests.e2e.conftest import provider_env
from tests.plugin.conftest import PLUGIN, run_script
from tests.support.app_server import AppServer, RunningServer
from tests.support.fakes import FakeProvider, Text
from tests.support.fixtures import TRANSCRIPT

pytestmark = pytest.mark.e2e

SPOOL_WAIT_S = 30.0


def _write(repo: Path, text: str) -> bytes:
    body = {"cwd": str(repo), "events": [{"path": "notes.txt", "kind": "write", "content": text}]}
    return json.dumps(body).encode()


def _spool(directory: Path, *lines: bytes) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "events.jsonl"
    with path.open("ab") as handle:
        handle.write(b"".join(line + b"\n" for line in lines))
    return path


def _drained(spool: Path) -> None:
    deadline = time.monotonic() + SPOOL_WAIT_S
    while spool.exists():  # polling the server's effect on a file: no event to wait on
        assert time.monotonic() < deadline, f"{spool} still holds {spool.read_text()!r}"
        time.sleep(0.05)


def _make_known(data: Path, fake: FakeProvider, repo: Path) -> None:
    """Give `repo` a snapshot, as a session before the outage would have: notifications for a
    workspace the server has never known create nothing, spooled or not."""
    with AppServer(data, provider_env(fake, "anthropic")) as server:
        _prompt_of_an_answer(server, fake, repo)


def _prompt_of_an_answer(server: RunningServer, fake: FakeProvider, repo: Path) -> str:
    before = len(fake.requests)
    fake.responder = lambda recorded: Text("noted")  # answers, and summaries of the transcript
    reply = server.request("POST", "/api/ask", json={"question": "notes?", "cwd": str(repo)})
    assert reply.status_code == 200, reply.text
    answers = [r.body for r in fake.requests[before:] if r.body.get("tools")]
    return json.dumps(answers[-1])


def test_a_spool_left_in_the_data_dir_is_replayed_at_start_in_order(
    fake: FakeProvider, repo: Path, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    _make_known(data, fake, repo)
    spool = _spool(
        data / "spool",
        _write(repo, "version one"),
        b"a line no route takes",
        _write(repo, "version two, the last write"),
    )
    with AppServer(data, provider_env(fake, "anthropic")) as server:
        _drained(spool)
        prompt = _prompt_of_an_answer(server, fake, repo)
    assert "version two, the last write" in prompt
    assert "version one" not in prompt  # replayed in order: the later write is the one held


def test_a_session_naming_its_spool_gets_it_replayed_now_and_at_every_start(
    fake: FakeProvider, repo: Path, tmp_path: Path
) -> None:
    data, plugin_data, home = tmp_path / "data", tmp_path / "plugin-data", tmp_path / "home"
    home.mkdir()
    transcript = tmp_path / "session.jsonl"
    shutil.copy(TRANSCRIPT, transcript)
    enqueue = {"cwd": str(repo), "session_id": "s-1", "transcript_path": str(transcript)}
    _make_known(data, fake, repo)
    spool = _spool(
        plugin_data / "spool",
        _write(repo, "written while the server was down"),
        json.dumps({"route": "/api/enqueue", "body": enqueue}).encode(),
    )
    env = provider_env(fake, "anthropic")
    with AppServer(data, env) as server:
        assert spool.exists()  # a plugin's own spool: the server has not heard of it yet
        hook_env = {
            "PATH": "/usr/bin:/bin",
            "HOME": str(home),
            "CLAUDE_PLUGIN_DATA": str(plugin_data),
            "CLAUDE_PLUGIN_ROOT": str(PLUGIN),
            "LIVE_MEMORY_PORT": str(server.port),
            "XDG_RUNTIME_DIR": os.environ["XDG_RUNTIME_DIR"],  # where the server's identity is
        }
        payload = json.dumps({"cwd": str(repo), "hook_event_name": "SessionStart"})
        ran = run_script("session-start.py", payload, hook_env)
        assert ran.returncode == 0, ran.stderr
        assert not spool.exists()  # replayed before the banner was answered
        assert (
            "call the ask_live_memory tool"
            in json.loads(ran.stdout)["hookSpecificOutput"]["additionalContext"]
        )
        assert "written while the server was down" in _prompt_of_an_answer(server, fake, repo)
        transcripts = server.request("GET", "/health").json()["transcripts"]
        assert sum(transcripts.values()) == 1  # the spooled Stop hand-over arrived, once
    assert json.loads((data / "spools.json").read_text()) == [str(plugin_data / "spool")]

    _spool(plugin_data / "spool", _write(repo, "written during the next outage"))
    with AppServer(data, env) as server:
        _drained(spool)  # remembered: drained at start, no session needed
        assert "written during the next outage" in _prompt_of_an_answer(server, fake, repo)
