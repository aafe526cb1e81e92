"""LIVE_MEMORY_WORKSPACES_ACTIVE_MAX through the real server: past the cap the least recently
used idle workspaces are passivated early, their state comes back whole from the snapshot on
the next request, and a workspace with a question in flight is never passivated for room (with
every one busy, a new workspace is admitted over the cap)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from live_memory.actors.passivation import ActiveWorkspaces
from tests.e2e.conftest import provider_env
from tests.support.app_server import AppServer
from tests.support.fakes import FakeProvider, Text
from tests.support.repo import make_repo

CAP = 3
WAIT_S = 60.0  # an upper bound for a loaded machine; every wait ends on its condition


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeProvider]:
    with FakeProvider() as provider:
        yield provider


@pytest.fixture
def server(fake: FakeProvider, tmp_path: Path) -> Iterator[AppServer]:
    fake.reset()
    env = provider_env(fake, "anthropic") | {"LIVE_MEMORY_WORKSPACES_ACTIVE_MAX": str(CAP)}
    with AppServer(tmp_path / "data", env) as running:
        yield running


def _repos(tmp_path: Path, count: int) -> list[Path]:
    return [make_repo(tmp_path / f"repo{i}", {"src/app.py": _content(i)}) for i in range(count)]


def _content(i: int) -> str:
    return f"VALUE = {i}  # the file of repo{i}\n"


def _use(server: AppServer, repo: Path, i: int) -> None:
    """Create the workspace (a clear) and let it learn its file from a read."""
    assert server.request("POST", "/clear", json={"cwd": str(repo)}).status_code == 200
    event = {"path": "src/app.py", "kind": "read", "content": _content(i)}
    notified = server.request("POST", "/notify", json={"cwd": str(repo), "events": [event]})
    assert notified.json() == {"accepted": 1, "ignored": 0}


def _active(server: AppServer) -> set[str]:
    rows = server.request("GET", "/actors").json()
    return {str(a["workspace"]) for a in rows if a["kind"] == "workspace"}


def _wait_active(server: AppServer, wanted: set[Path]) -> None:
    """Until exactly `wanted` is active (passivation ends in another thread: no event to
    wait on from outside but the actor list itself)."""
    names = {str(p) for p in wanted}
    deadline = time.monotonic() + WAIT_S
    while (seen := _active(server)) != names and time.monotonic() < deadline:
        time.sleep(0.05)
    assert seen == names


def _gateway_active(server: AppServer) -> ActiveWorkspaces[Any]:
    """The gateway's registry itself (its count of asks is not on the HTTP surface)."""
    assert server._server is not None
    service = server._server._app.state.service
    active = service.gateway.proxy().active.get(timeout=WAIT_S)
    assert isinstance(active, ActiveWorkspaces)
    return active


def _over_cap(server: AppServer) -> int:
    health = server.request("GET", "/health").json()
    assert health["workspaces_active_max"] == CAP
    return int(health["workspaces_admitted_over_cap"])


def _ask(server: AppServer, repo: Path) -> str:
    asked = server.request(
        "POST", "/api/ask", json={"question": "What is VALUE?", "cwd": str(repo)}
    )
    assert asked.status_code == 200, asked.text
    return str(asked.json()["answer"])


def _kept(server: AppServer, repo: Path) -> tuple[object, ...]:
    """What of a workspace's /stats its snapshot carries (teed content is not kept)."""
    stats = server.request("GET", "/stats", params={"cwd": str(repo)})
    assert stats.status_code == 200, stats.text  # 404: no memory (no snapshot)
    doc = stats.json()
    files = doc["file_contexts"]
    return doc["messages_retained"], doc["questions_answered"], doc["version"], files["loaded"]


def test_past_the_cap_the_oldest_idle_workspaces_passivate_and_come_back_whole(
    server: AppServer, fake: FakeProvider, tmp_path: Path
) -> None:
    repos = _repos(tmp_path, CAP + 2)
    _use(server, repos[0], 0)
    fake.script(Text("VALUE is the-first-answer."))
    assert _ask(server, repos[0]).startswith("VALUE is the-first-answer.")
    before = _kept(server, repos[0])
    assert before[0] > 0 and before[1] == 1 and before[3] == 1
    for i, repo in enumerate(repos[1:], 1):
        _use(server, repo, i)
    _wait_active(server, set(repos[-CAP:]))  # the two least recently used went
    # The first comes back from its snapshot as it was; the oldest left makes room for it.
    assert _kept(server, repos[0]) == before
    _wait_active(server, {*repos[-2:], repos[0]})
    fake.script(Text("Still the first answer."))
    assert _ask(server, repos[0]).startswith("Still the first answer.")
    prompt = fake.wait_for_requests(2, WAIT_S)[-1].raw
    assert b"the-first-answer" in prompt  # the restored history is in the next prompt
    assert _over_cap(server) == 0
    assert _gateway_active(server).asked_to_passivate >= 3


def test_a_busy_workspace_is_never_passivated_for_room_and_all_busy_admits_over_the_cap(
    server: AppServer, fake: FakeProvider, tmp_path: Path
) -> None:
    repos = _repos(tmp_path, CAP + 2)
    for i, repo in enumerate(repos[:CAP]):
        _use(server, repo, i)
    gate = fake.hold()
    fake.responder = lambda recorded: Text("held answer")
    with ThreadPoolExecutor(CAP) as pool:
        asks: list[Future[httpx.Response]] = [
            pool.submit(
                httpx.post,
                f"{server.url}/api/ask",
                json={"question": "What is VALUE?", "cwd": str(repo)},
                timeout=WAIT_S * 2,
            )
            for repo in repos[:CAP]
        ]
        fake.wait_for_requests(CAP, WAIT_S)  # every one of the three has a question in flight
        _use(server, repos[CAP], CAP)  # one over the cap: every one asked to make room is busy
        deadline = time.monotonic() + WAIT_S
        while _over_cap(server) == 0:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert _active(server) == {str(p) for p in repos[: CAP + 1]}
        gate.set()
        for ask in asks:
            reply = ask.result(WAIT_S * 2)
            assert reply.status_code == 200 and reply.json()["answer"].startswith("held answer")
    # Idle again: the next activation makes the room, from the least recently used as the
    # gateway saw them: repos[CAP] (activated last, never asked), then the first to answer
    # that it stayed (the asks go one at a time, oldest first).
    _use(server, repos[CAP + 1], CAP + 1)
    _wait_active(server, {repos[1], repos[2], repos[CAP + 1]})
