"""The notify hook's durable spool: nothing is lost while the server is down or failing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.e2e.conftest import provider_env
from tests.plugin.capture_server import CaptureServer, Seen, closed_port
from tests.plugin.conftest import SCRIPT_TIMEOUT_S, SCRIPTS, HookWorld, hook_payloads, run_script
from tests.support.fakes import FakeProvider, Text
from tests.support.server_process import ServerProcess, free_port

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def _change(world: HookWorld, name: str) -> dict[str, object]:
    (world.project / name).write_text(f"{name}\n")
    payload = dict(hook_payloads(world.project)["FileChanged(change)"])
    payload["file_path"] = str(world.project / name)
    return payload


def _notify_ok(world: HookWorld, port: int, payload: object) -> None:
    ran = run_script("notify.py", json.dumps(payload), world.at(port))
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == ""


def _spooled_paths(world: HookWorld) -> list[str]:
    lines = world.spool_file.read_bytes().splitlines() if world.spool_file.exists() else []
    return [json.loads(line)["file_path"] for line in lines]


def _load_notify() -> SimpleNamespace:
    namespace: dict[str, object] = {
        "__name__": "notify_under_test",
        "__file__": str(SCRIPTS / "notify.py"),
    }
    exec(compile((SCRIPTS / "notify.py").read_text(), "notify.py", "exec"), namespace)
    return SimpleNamespace(**namespace)


def test_events_made_while_the_server_is_down_arrive_first_and_in_order_when_it_is_back(
    world: HookWorld,
) -> None:
    port = closed_port()
    early = [_change(world, f"early-{i}.txt") for i in range(3)]
    for payload in early:
        _notify_ok(world, port, payload)
    assert _spooled_paths(world) == [p["file_path"] for p in early]

    with CaptureServer(port=port) as server:
        late = _change(world, "late.txt")
        _notify_ok(world, port, late)
        received = server.wait_for(4)
    assert [seen.json() for seen in received] == [*early, late]
    assert not world.spool_file.exists()


def test_a_5xx_answer_spools_the_event_and_a_4xx_drops_it(world: HookWorld) -> None:
    answers = {"status": 500}

    def respond(seen: Seen) -> tuple[int, object]:
        return answers["status"], {"error": "nope"}

    with CaptureServer(respond=respond) as server:
        failing = _change(world, "failing.txt")
        _notify_ok(world, server.port, failing)
        assert _spooled_paths(world) == [failing["file_path"]]

        answers["status"] = 422
        refused = _change(world, "refused.txt")
        _notify_ok(world, server.port, refused)  # replays `failing` (refused too), then its own
        assert not world.spool_file.exists()

        answers["status"] = 200
        fine = _change(world, "fine.txt")
        _notify_ok(world, server.port, fine)
        bodies = [seen.json() for seen in server.wait_for(4)]
    assert bodies == [failing, failing, refused, fine]
    assert not world.spool_file.exists()


def test_concurrent_hooks_with_the_server_down_all_land_in_the_spool(world: HookWorld) -> None:
    port = closed_port()
    payloads = [_change(world, f"parallel-{i}.txt") for i in range(8)]
    procs = [
        subprocess.Popen(
            [sys.executable, "-I", "-S", str(SCRIPTS / "notify.py")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=world.at(port),
        )
        for _ in payloads
    ]
    for proc, payload in zip(procs, payloads, strict=True):
        out, err = proc.communicate(json.dumps(payload).encode(), timeout=SCRIPT_TIMEOUT_S)
        assert proc.returncode == 0 and out == b"", err
    assert sorted(_spooled_paths(world)) == sorted(p["file_path"] for p in payloads)


def test_the_spool_keeps_only_the_newest_events_within_its_bounds(tmp_path: Path) -> None:
    notify = _load_notify()
    spool = notify.Spool(str(tmp_path / "spool"), max_events=3, max_bytes=1_000_000)
    with spool.locked() as held:
        assert held
        spool.write([f'{{"n": {i}}}'.encode() for i in range(5)])
    assert spool.read() == [b'{"n": 2}', b'{"n": 3}', b'{"n": 4}']

    small = notify.Spool(str(tmp_path / "small"), max_events=100, max_bytes=25)
    with small.locked():
        small.write([b'{"n": "aaaaaaaa"}', b'{"n": "bbbbbbbb"}'])  # 18 bytes + newline each
    assert small.read() == [b'{"n": "bbbbbbbb"}']


def test_the_default_spool_bound_holds_through_the_hook(world: HookWorld) -> None:
    notify = _load_notify()
    spool = notify.Spool(str(world.data / "spool"))
    stale = [json.dumps({"old": i}).encode() for i in range(notify.SPOOL_MAX_EVENTS)]
    with spool.locked():
        spool.write(stale)
    newest = _change(world, "newest.txt")
    _notify_ok(world, closed_port(), newest)
    lines = spool.read()
    assert len(lines) == notify.SPOOL_MAX_EVENTS
    assert json.loads(lines[0]) == {"old": 1}
    assert json.loads(lines[-1]) == newest


def test_edits_made_while_the_real_server_is_down_are_in_its_memory_after_it_starts(
    world: HookWorld, tmp_path: Path
) -> None:
    port = free_port()
    subprocess.run(["git", "init", "-q", str(world.project)], check=True, timeout=30)
    # A session before the outage made the workspace known (a snapshot): notifications for a
    # workspace the server has never known create nothing, spooled or not.
    with (
        FakeProvider() as fake,
        ServerProcess(
            tmp_path / "server-data", provider_env(fake, "anthropic"), port=port
        ) as server,
    ):
        fake.responder = lambda recorded: Text("known")
        asked = server.request(
            "POST", "/api/ask", json={"question": "hello?", "cwd": str(world.project)}
        )
        assert asked.status_code == 200, asked.text
    write = hook_payloads(world.project)["PostToolUse(Write)"]
    for name in ("a.txt", "b.txt"):
        (world.project / name).write_text(f"{name} written while the server was down\n")
        _notify_ok(world, port, {**write, "tool_input": {"file_path": name, "content": "x"}})
    assert len(_spooled_lines(world)) == 2

    with ServerProcess(tmp_path / "server-data", {}, port=port) as server:
        _notify_ok(world, port, {**write, "tool_input": {"file_path": "out.txt", "content": "x"}})
        stats = server.request("GET", "/stats", params={"cwd": str(world.project)}).json()
    assert not world.spool_file.exists()
    assert stats["file_contexts"]["with_content"] == 3


def _spooled_lines(world: HookWorld) -> list[bytes]:
    return world.spool_file.read_bytes().splitlines() if world.spool_file.exists() else []
