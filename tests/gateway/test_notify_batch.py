"""Held workspaces' notifications gathered on the event loop (gateway/notify_batch).

The pure batch (order, runs merged, the caps), and the service around it: a notification
gathered for an actor that was passivated before the flush still reaches the workspace,
through the gateway, like a name the edge holds no handle for.
"""

from __future__ import annotations

import asyncio
import subprocess
import time
from pathlib import Path

from live_memory.actors.message import RequestPassivation
from live_memory.config import load_settings
from live_memory.gateway.notify_batch import NotifyBatch
from live_memory.gateway.service import LiveMemoryService
from live_memory.workspace import FileEvent

WAIT_S = 10.0


def _event(path: str, content: str | None = None) -> FileEvent:
    return FileEvent(path, "read" if content is not None else "change", content)


def test_runs_of_one_name_become_one_message_in_arrival_order() -> None:
    batch = NotifyBatch(max_events=100, max_bytes=1000)
    assert not batch
    assert batch.add("/a", (_event("1.py"),)) is False
    assert batch.add("/a", (_event("2.py"), _event("3.py"))) is False
    assert batch.add("/b", (_event("4.py"),)) is False
    assert batch.add("/a", (_event("5.py"),)) is False
    assert batch
    taken = batch.take()
    assert [(cwd, [e.path for e in events]) for cwd, events in taken] == [
        ("/a", ["1.py", "2.py", "3.py"]),
        ("/b", ["4.py"]),
        ("/a", ["5.py"]),  # not merged with the first run: /b's came in between
    ]
    assert not batch and batch.take() == []


def test_a_batch_at_either_cap_asks_to_be_flushed_and_starts_empty_after() -> None:
    batch = NotifyBatch(max_events=3, max_bytes=10)
    assert batch.add("/a", (_event("1.py"), _event("2.py"))) is False
    assert batch.add("/a", (_event("3.py"),)) is True  # 3 events
    batch.take()
    assert batch.add("/a", (_event("1.py", "x" * 9),)) is False
    assert batch.add("/b", (_event("2.py", "y"),)) is True  # 10 content bytes
    batch.take()
    assert batch.add("/a", (_event("1.py", "x" * 9),)) is False  # the counts were reset


def test_a_notification_gathered_before_its_workspace_passivated_still_reaches_it(
    tmp_path: Path,
) -> None:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    for name in ("app", "new"):  # on disk as notified: re-activation re-checks them
        (root / "src" / f"{name}.py").write_text(f"{name.upper()} = 1\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    settings = load_settings({"LIVE_MEMORY_DATA_DIR": str(tmp_path / "data")}, home=tmp_path)
    service = LiveMemoryService(settings)

    def body(name: str) -> dict[str, object]:
        event = {"path": f"src/{name}.py", "kind": "read", "content": f"{name.upper()} = 1\n"}
        return {"cwd": str(root), "events": [event]}

    async def gather() -> None:
        outcome = service.notify_held(body("new"))
        assert outcome is not None and outcome.accepted == 1

    try:
        asyncio.run(service.clear(str(root)))  # the edge now holds the workspace's handle
        # Something to keep: a passivated workspace with nothing in memory is forgotten.
        assert asyncio.run(service.notify(body("app"))).accepted == 1
        # Gathered on a loop that ends at once: its flush timer never fires, so the events
        # wait in the batch while the workspace passivates.
        asyncio.run(gather())
        service.gateway.tell(RequestPassivation(str(root)))
        deadline = time.monotonic() + WAIT_S
        while any(a["kind"] == "workspace" for a in service.actors()):
            assert time.monotonic() < deadline, "the workspace did not passivate"
            time.sleep(0.02)
        stats = asyncio.run(service.stats(str(root)))  # flushes first, then asks
        contexts = stats["file_contexts"]
        assert isinstance(contexts, dict)
        # src/app.py came back from the snapshot, src/new.py (with its bytes) from the batch.
        assert (contexts["loaded"], contexts["held_bytes"]) == (2, len("NEW = 1\n")), contexts
    finally:
        asyncio.run(service.shutdown(grace_s=1.0))
