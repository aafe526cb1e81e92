"""The Stop hook (plugin/scripts/notify.py): a finished turn hands its transcript to the server."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.plugin.capture_server import CaptureServer, Seen, closed_port
from tests.plugin.conftest import SCRIPTS, HookWorld, hook_payloads, run_script
from tests.support.fixtures import TRANSCRIPT
from tests.support.server_process import ServerProcess

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def _stop(world: HookWorld, session_id: str = "c6e61a63") -> dict[str, object]:
    """A Stop payload as Claude Code sends it, its transcript a copy of the real fixture."""
    transcript = world.project.parent / f"{session_id}.jsonl"
    if not transcript.exists():
        shutil.copyfile(TRANSCRIPT, transcript)
    return {
        "session_id": session_id,
        "transcript_path": str(transcript),
        "cwd": str(world.project),
        "permission_mode": "default",
        "hook_event_name": "Stop",
        "stop_hook_active": False,
    }


def _enqueue_body(payload: dict[str, object]) -> dict[str, object]:
    return {key: payload[key] for key in ("cwd", "session_id", "transcript_path")}


def _hook(world: HookWorld, port: int, payload: object) -> None:
    ran = run_script("notify.py", json.dumps(payload), world.at(port))
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == ""
    assert ran.stderr == ""


def _spooled(world: HookWorld) -> list[bytes]:
    return world.spool_file.read_bytes().splitlines() if world.spool_file.exists() else []


def _load_notify() -> SimpleNamespace:
    namespace: dict[str, object] = {
        "__name__": "notify_under_test",
        "__file__": str(SCRIPTS / "notify.py"),
    }
    exec(compile((SCRIPTS / "notify.py").read_text(), "notify.py", "exec"), namespace)
    return SimpleNamespace(**namespace)


def test_stop_posts_cwd_session_and_transcript_path_to_enqueue(
    world: HookWorld, capture: CaptureServer
) -> None:
    payload = _stop(world)
    env = {**world.at(capture.port), "LIVE_MEMORY_TOKEN": "tok"}
    ran = run_script("notify.py", json.dumps(payload), env)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, "", "")
    (seen,) = capture.wait_for(1)
    assert (seen.method, seen.path) == ("POST", "/api/enqueue")
    assert seen.headers["content-type"] == "application/json"
    assert seen.headers["authorization"] == "Bearer tok"
    assert seen.json() == _enqueue_body(payload)  # the path only: never the transcript's text
    assert not world.spool_file.exists()


def test_a_stop_payload_missing_a_field_sends_nothing(
    world: HookWorld, capture: CaptureServer
) -> None:
    payload = _stop(world)
    for key in ("cwd", "session_id", "transcript_path"):
        _hook(world, capture.port, {**payload, key: ""})
        _hook(world, capture.port, {k: v for k, v in payload.items() if k != key})
    assert capture.requests == []
    assert not world.spool_file.exists()


def test_a_refused_enqueue_is_dropped_not_spooled(world: HookWorld) -> None:
    def respond(seen: Seen) -> tuple[int, object]:
        return 422, {"error": "transcript cannot be read"}

    with CaptureServer(respond=respond) as server:
        _hook(world, server.port, _stop(world))
        server.wait_for(1)
    assert not world.spool_file.exists()


def test_a_stop_while_the_server_is_down_is_replayed_to_enqueue_in_order(
    world: HookWorld,
) -> None:
    port = closed_port()
    stop = _stop(world)
    change = hook_payloads(world.project)["FileChanged(change)"]
    _hook(world, port, stop)
    _hook(world, port, change)
    first, second = _spooled(world)
    assert json.loads(first) == {"route": "/api/enqueue", "body": _enqueue_body(stop)}
    assert json.loads(second) == change  # a /notify body is spooled as it always was

    with CaptureServer(port=port) as server:
        later = _stop(world, session_id="second-session")
        _hook(world, port, later)
        received = server.wait_for(3)
    assert [(seen.path, seen.json()) for seen in received] == [
        ("/api/enqueue", _enqueue_body(stop)),
        ("/notify", change),
        ("/api/enqueue", _enqueue_body(later)),
    ]
    assert not world.spool_file.exists()


def test_repeated_stops_of_one_session_keep_one_spooled_enqueue(world: HookWorld) -> None:
    port = closed_port()
    stop = _stop(world)
    change = hook_payloads(world.project)["FileChanged(change)"]
    for _ in range(3):  # Stop fires after every turn
        _hook(world, port, stop)
        _hook(world, port, change)
    routes = [json.loads(line).get("route", "/notify") for line in _spooled(world)]
    assert routes == ["/notify", "/notify", "/api/enqueue", "/notify"]


def test_spool_lines_unwrap_to_their_route_and_unknown_routes_are_dropped() -> None:
    notify = _load_notify()
    body = b'{"cwd":"/w","session_id":"s","transcript_path":"/t.jsonl"}'
    line = notify.wrap("/api/enqueue", body)
    assert notify.unwrap(line) == ("/api/enqueue", body)
    assert notify.wrap("/notify", b'{"cwd":"/w"}') == b'{"cwd":"/w"}'
    assert notify.unwrap(b'{"cwd":"/w"}') == ("/notify", b'{"cwd":"/w"}')
    assert notify.unwrap(b'{"route":"/reset","body":{"cwd":"/w"}}') is None
    assert notify.unwrap(b'{"route":"/api/enqueue","body":') is None


def test_the_real_server_queues_the_hooks_transcript_once(world: HookWorld, tmp_path: Path) -> None:
    """Needs the server's POST /api/enqueue (issue 9)."""
    subprocess.run(["git", "init", "-q", str(world.project)], check=True, timeout=30)
    stop = _stop(world)
    with ServerProcess(tmp_path / "server-data", {}) as server:
        _hook(world, server.port, stop)
        again = server.request("POST", "/api/enqueue", json=_enqueue_body(stop))
    assert not world.spool_file.exists()
    assert again.status_code == 200, again.text
    reply = again.json()
    assert reply["queued"] is False  # the hook's own call queued it already
    assert reply["id"] is None
    assert isinstance(reply["pending"], int)
