"""SQLite and file-system calls of the edge run off the event loop, on a bounded pool."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path

from live_memory.config import constants as C
from live_memory.config import load_settings
from live_memory.gateway.blocking import BlockingCalls
from live_memory.gateway.service import LiveMemoryService

WAIT_S = 10.0


def test_blocking_calls_run_on_at_most_their_threads() -> None:
    calls = BlockingCalls(threads=2)
    release = threading.Event()
    started: list[str] = []
    lock = threading.Lock()

    def blocked(n: int) -> int:
        with lock:
            started.append(threading.current_thread().name)
        assert release.wait(WAIT_S)
        return n

    async def run() -> list[int]:
        tasks = [asyncio.create_task(calls.run(blocked, n)) for n in range(3)]
        while len(started) < 2:  # the loop stays free while both threads are held
            await asyncio.sleep(0.01)
        assert len(started) == 2 and not any(t.done() for t in tasks)
        release.set()
        return list(await asyncio.gather(*tasks))

    try:
        assert asyncio.run(run()) == [0, 1, 2]
    finally:
        calls.close()
    assert all(name.startswith("edge-blocking") for name in started)


def test_health_leaves_the_event_loop_free_while_sqlite_waits_for_a_writer(
    tmp_path: Path,
) -> None:
    settings = load_settings({"LIVE_MEMORY_DATA_DIR": str(tmp_path / "data")}, home=tmp_path)
    service = LiveMemoryService(settings)
    writer = sqlite3.connect(settings.data_dir / C.USAGE_FILE_NAME, isolation_level=None)

    async def run() -> dict[str, object]:
        writer.execute("BEGIN IMMEDIATE")  # another writer holds the usage database
        health = asyncio.create_task(service.health())
        # /health waits for the writer (up to SQLITE_BUSY_TIMEOUT_S) on a pool thread: this
        # loop keeps running meanwhile. On the loop itself, no timeout could fire before it.
        done, _ = await asyncio.wait({health}, timeout=1.0)
        assert not done
        writer.execute("COMMIT")
        return await asyncio.wait_for(health, WAIT_S)

    try:
        body = asyncio.run(run())
        assert body["transcripts"] is not None and "usage_today" in body
        by_day = asyncio.run(service.usage_by_day(None))
        assert by_day == []
    finally:
        writer.close()
        asyncio.run(service.shutdown(grace_s=1))
