"""The server's side of the watcher: /health reads the status the watcher publishes (a
watcher busy walking a huge tree or flushing a storm never makes /health wait; it used to
wait up to 5 s and answer 504), and a workspace re-validates its window on a storm."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from concurrent.futures import Future
from pathlib import Path

import pytest

from live_memory.actors.message import GetStats, Revalidate, Route, WatchRoot
from live_memory.actors.watchdog import WatchdogActor
from live_memory.config import constants as C
from live_memory.config import load_settings
from live_memory.gateway.service import LiveMemoryService
from tests.support.repo import make_repo

WAIT_S = 10.0


def _hold_watches(monkeypatch: pytest.MonkeyPatch) -> tuple[threading.Event, threading.Event]:
    """The watchdog's placing of a root's watches held until `release` (a walk of a very large
    tree, as far as anyone else can tell); `busy` is set once it started."""
    busy, release = threading.Event(), threading.Event()
    original = WatchdogActor._watch

    def held_watch(self: WatchdogActor, root: str) -> None:
        busy.set()
        release.wait(WAIT_S * 3)
        original(self, root)

    monkeypatch.setattr(WatchdogActor, "_watch", held_watch)
    return busy, release


def _os_watched_service(tmp_path: Path) -> LiveMemoryService:
    settings = load_settings(
        {"LIVE_MEMORY_DATA_DIR": str(tmp_path / "data"), "LIVE_MEMORY_WATCHER": "os"},
        home=tmp_path,
    )
    return LiveMemoryService(settings)


def test_health_answers_while_the_watcher_is_busy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "a = 1\n"})
    busy, release = _hold_watches(monkeypatch)
    service = _os_watched_service(tmp_path)
    try:
        assert service.watcher is not None
        service.watcher.tell(WatchRoot(str(repo)))
        assert busy.wait(WAIT_S)

        async def health() -> dict[str, object]:
            return await asyncio.wait_for(service.health(), timeout=WAIT_S / 2)

        body = asyncio.run(health())  # the watcher is still held: this never asked it
        assert release.is_set() is False
        watcher = body["watcher"]
        assert isinstance(watcher, dict)
        assert (watcher["mode"], watcher["roots"]) == ("inotify", 0)
    finally:
        release.set()
        asyncio.run(service.shutdown(grace_s=1.0))


def _stats(service: LiveMemoryService, repo: Path) -> dict[str, object]:
    stats: Future[dict[str, object]] = Future()
    service.gateway.tell(Route(str(repo), GetStats(stats)))
    return stats.result(WAIT_S)


def test_a_revalidation_re_reads_changed_and_marks_deleted_window_files_only(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "A = 1\n", "b.py": "B = 1\n", "c.py": "C\n"})
    settings = load_settings({"LIVE_MEMORY_DATA_DIR": str(tmp_path / "data")}, home=tmp_path)
    service = LiveMemoryService(settings)
    try:
        reads = [
            {"path": name, "kind": "read", "content": (repo / name).read_text()}
            for name in ("a.py", "b.py", "c.py")
        ]
        asyncio.run(service.clear(str(repo)))  # a notification alone creates no workspace
        outcome = asyncio.run(service.notify({"cwd": str(repo), "events": reads}))
        assert outcome.accepted == 3
        (repo / "a.py").write_text("A = 2\n", encoding="utf-8")
        (repo / "b.py").unlink()
        service.gateway.tell(Route(str(repo), Revalidate(files=True)))
        deadline = time.monotonic() + WAIT_S
        while True:  # the held file is re-read off the actor; its result comes back later
            stats = _stats(service, repo)
            fresh = stats["freshness"]
            assert isinstance(fresh, dict)
            if fresh["waiting"] == 0 or time.monotonic() > deadline:
                break
            time.sleep(0.02)  # polling the workspace's view; there is no event to wait on
        contexts = stats["file_contexts"]
        assert isinstance(contexts, dict)
        # a.py changed: re-read, current with its new bytes; b.py gone; c.py untouched.
        assert (contexts["stale"], contexts["deleted"], contexts["with_content"]) == (0, 1, 2)
        assert (fresh["refreshed"], fresh["unchanged"]) == (1, 1)
    finally:
        asyncio.run(service.shutdown(grace_s=1.0))


def test_an_edit_before_the_watches_are_placed_still_reaches_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The watchdog places a root's watches on its own thread after the workspace activated;
    # the index's first pass may finish first. An edit in between used to reach no one.
    repo = make_repo(tmp_path / "repo", {"app.py": "def old_name():\n    pass\n"})
    busy, release = _hold_watches(monkeypatch)
    service = _os_watched_service(tmp_path)
    symbols = service.stores.symbols
    assert symbols is not None
    try:
        # An empty import activates the workspace, its pass starts (a clear drops the index).
        asyncio.run(service.import_facts({"cwd": str(repo), "facts": []}))
        assert busy.wait(WAIT_S)
        index = symbols.open(repo, secret_patterns=())  # the workspace's own index
        try:
            assert index.completed.wait(WAIT_S) and symbols.wait_idle(WAIT_S)
            (repo / "app.py").write_text("def new_name():\n    pass\n", encoding="utf-8")
            assert symbols.wait_idle(WAIT_S) and index.find("new_name") == []
            release.set()  # the watches go in; the workspace hears they are placed
            deadline = time.monotonic() + WAIT_S * 3
            while not index.find("new_name") and time.monotonic() < deadline:
                symbols.wait_idle(WAIT_S)
                time.sleep(0.02)  # the recheck is told through two actors; no event to wait on
            assert [r.location for r in index.find("new_name")] == ["app.py:1"]
            assert index.find("old_name") == []
        finally:
            symbols.release(repo)
    finally:
        release.set()
        asyncio.run(service.shutdown(grace_s=1.0))


def test_health_reports_a_watcher_stuck_on_one_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "a = 1\n"})
    busy, release = _hold_watches(monkeypatch)
    monkeypatch.setattr(C, "WATCH_STUCK_AFTER_S", 0.0)  # any time on one message is too long
    service = _os_watched_service(tmp_path)
    try:
        assert service.watcher is not None
        service.watcher.tell(WatchRoot(str(repo)))
        assert busy.wait(WAIT_S)
        stuck = asyncio.run(asyncio.wait_for(service.health(), timeout=WAIT_S))
        assert stuck["status"] == "degraded"
        watcher = stuck["watcher"]
        assert isinstance(watcher, dict)
        assert "WatchRoot" in str(watcher["degraded_reason"])
        assert "no edit in any workspace is seen" in str(watcher["degraded_reason"])
        release.set()
        deadline = time.monotonic() + WAIT_S
        while service.watcher_board.read()["roots"] != 1:  # placed, then published
            assert time.monotonic() < deadline, "the released watcher never placed the root"
            time.sleep(0.02)  # polling the published status; there is no event to wait on
        monkeypatch.setattr(C, "WATCH_STUCK_AFTER_S", WAIT_S)
        healthy = asyncio.run(asyncio.wait_for(service.health(), timeout=WAIT_S))
        assert healthy["status"] == "no_provider"  # not degraded: the watcher moved on
        assert healthy["watcher"]["degraded_reason"] is None  # type: ignore[index]
    finally:
        release.set()
        asyncio.run(service.shutdown(grace_s=1.0))


def test_fifo_ignore_files_never_block_the_watcher_and_other_roots_are_still_watched(
    tmp_path: Path,
) -> None:
    hostile = make_repo(tmp_path / "hostile", {"src/a.py": "a = 1\n"})
    os.mkfifo(hostile / "src" / ".gitignore")  # no writer ever comes: open() would wait
    exclude = hostile / ".git" / "info" / "exclude"
    exclude.parent.mkdir(exist_ok=True)
    exclude.unlink(missing_ok=True)
    os.mkfifo(exclude)
    plain = make_repo(tmp_path / "plain", {"b.py": "b = 1\n"})
    service = _os_watched_service(tmp_path)
    try:
        assert service.watcher is not None
        service.watcher.tell(WatchRoot(str(hostile)))
        service.watcher.tell(WatchRoot(str(plain)))
        # git itself still waits on the FIFO until the watcher's git deadline kills it.
        deadline = time.monotonic() + C.WATCH_GIT_TIMEOUT_S + WAIT_S * 3
        while service.watcher_board.read()["roots"] != 2:
            assert time.monotonic() < deadline, "the watcher never got past the FIFO"
            time.sleep(0.05)  # polling the published status; there is no event to wait on
    finally:
        asyncio.run(service.shutdown(grace_s=1.0))
