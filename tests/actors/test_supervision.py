"""The gateway supervises workspace actors: one whose handler raises is replaced by a fresh
actor restored from the snapshot, and the failure stays visible in the inventory."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from live_memory.actors import ActorSystem, GatewayActor, GetStats, Route, WorkspaceActor
from live_memory.agent import build_services
from live_memory.agent.services import Stores
from live_memory.config import load_settings
from live_memory.knowledge import TranscriptQueue, UsageLedger
from live_memory.memory import Window
from live_memory.memory.persist import window_to_state
from live_memory.memory.snapshot_store import SnapshotStore

WAIT_S = 10.0


class FailingOnceWorkspace(WorkspaceActor):
    """A real workspace actor whose first stats request raises (a stand-in for a bug)."""

    failed_once = False

    def stats(self) -> dict[str, object]:
        if not FailingOnceWorkspace.failed_once:
            FailingOnceWorkspace.failed_once = True
            raise RuntimeError("boom in stats")
        return super().stats()


@pytest.fixture
def system() -> Iterator[ActorSystem]:
    system = ActorSystem()
    yield system
    system.shutdown()


def _stats(gateway: Any, root: Path) -> Future[dict[str, object]]:
    reply: Future[dict[str, object]] = Future()
    gateway.tell(Route(str(root), GetStats(reply)))
    return reply


def test_a_failing_workspace_is_restarted_from_its_snapshot(
    system: ActorSystem, tmp_path: Path
) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    data = tmp_path / "data"
    settings = load_settings({"LIVE_MEMORY_DATA_DIR": str(data)}, home=tmp_path)
    stores = Stores(UsageLedger(data / "usage.sqlite3"), TranscriptQueue(data / "q.sqlite3"))
    store = SnapshotStore(settings.snapshot_dir)
    window = Window(str(root))
    window.append_qa("what is this?", "a demo")
    store.save(root, window_to_state(window) | {"version": 3})
    gateway = system.start(
        GatewayActor,
        services=build_services(settings, stores),
        store=store,
        workspace_cls=FailingOnceWorkspace,
    )
    with pytest.raises(RuntimeError, match="boom in stats"):
        _stats(gateway, root).result(timeout=WAIT_S)
    stats = _stats(gateway, root).result(timeout=WAIT_S)
    assert stats["messages_retained"] == 2
    assert stats["version"] == 3
    workspaces = [a for a in system.inventory() if a["kind"] == "workspace"]
    assert len(workspaces) == 1
    assert workspaces[0]["failures"] == 1
    assert "boom in stats" in str(workspaces[0]["last_error"])
    stores.close()
