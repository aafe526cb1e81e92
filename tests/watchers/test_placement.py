"""Which directories the OS watcher watches, checked against the kernel's own account of the
process's inotify watches (/proc/self/fdinfo), with a real watchdog observer."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from live_memory.watchers import OsWatch, WatchedRoot, WatchTable, native_observer, place_watches
from live_memory.watchers import os_watch as os_watch_module
from tests.support.inotify_count import kernel_watches
from tests.support.repo import make_repo

pytestmark = pytest.mark.skipif(
    not os.path.isdir("/proc/self/fdinfo"), reason="reads the kernel's inotify account"
)
WAIT_S = 30.0


@pytest.fixture
def watch() -> Iterator[OsWatch]:
    native = native_observer()
    assert native is not None and native[1] == "inotify"
    observer = OsWatch(*native, lambda: None)
    try:
        yield observer
    finally:
        observer.close()


def test_a_tree_free_of_ignored_directories_costs_one_scheduled_watch_and_no_ignored_one(
    watch: OsWatch, tmp_path: Path
) -> None:
    files = {f"src/p{i}/m{j}/f.py": "x\n" for i in range(10) for j in range(5)}
    files |= {".gitignore": "node_modules/\n", "docs/a.md": "a\n"}
    root = make_repo(tmp_path / "r", files)
    for i in range(30):
        (root / "node_modules" / f"p{i}" / "lib").mkdir(parents=True)
    table = WatchTable(per_root=1000, total=1000)
    before = kernel_watches()
    assert place_watches(watch, table, str(root), WatchedRoot(str(root)), "", report=False) is None
    watched_dirs = 1 + 1 + 10 + 50 + 1  # the root, src, src/p*, src/p*/m*, docs
    assert table.used_by(str(root)) == len(table) == watched_dirs
    assert kernel_watches() - before == watched_dirs  # node_modules/ and .git/ have none
    assert len(watch) == 3  # the root's own entries, src/ and docs/ (both whole)


def test_events_beyond_the_inbox_are_reported_lost_not_queued(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os_watch_module, "WATCH_INBOX_MAX", 1)
    woke = threading.Event()
    native = native_observer()
    assert native is not None
    watch = OsWatch(*native, woke.set)
    try:
        watch.add(str(tmp_path), recursive=False)
        for i in range(200):
            (tmp_path / f"f{i}.txt").write_text("x\n", encoding="utf-8")
        lost, seen = False, 0
        while not lost:  # each wake-up is one batch; one of them overflows the inbox
            assert woke.wait(WAIT_S), "no events reached the inbox"
            woke.clear()
            events, lost = watch.drain()
            assert len(events) <= 1
            seen += len(events)
        assert seen < 400  # 200 files created and written, two events each: some dropped
    finally:
        watch.close()
