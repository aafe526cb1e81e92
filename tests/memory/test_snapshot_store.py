"""Snapshots: atomic round trips, quarantine of unusable files, failed writes lose nothing."""

from __future__ import annotations

import errno
import logging
import os
import resource
import signal
import stat
import threading
from pathlib import Path

import orjson
import pytest

from live_memory.errors import SnapshotError
from live_memory.memory import snapshot_store
from live_memory.memory.snapshot_store import SnapshotStore
from tests.support.fifo import plant_fifo, without_blocking

ROOT = Path("/home/dev/projects/My Repo")
OTHER = Path("/home/dev/projects/other")


def quarantined(store: SnapshotStore) -> list[Path]:
    folder = store.directory / "quarantine"
    return sorted(folder.iterdir()) if folder.is_dir() else []


def test_round_trip_returns_the_saved_state(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path / "workspaces")
    state = {"version": 3, "history": [{"role": "user", "text": "hi"}], "ledger": "facts"}
    assert store.load(ROOT) is None
    assert not store.exists(ROOT)
    store.save(ROOT, state)
    assert store.exists(ROOT)
    assert store.load(ROOT) == state
    document = orjson.loads(store.path_for(ROOT).read_bytes())
    assert document["format_version"] == 1
    assert document["root"] == str(ROOT)
    assert document["saved_at"]


def test_file_names_are_stable_readable_and_distinct(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path)
    name = store.path_for(ROOT).name
    assert name == SnapshotStore(tmp_path).path_for(ROOT).name
    assert name.startswith("My-Repo-") and name.endswith(".json")
    assert store.path_for(ROOT) != store.path_for(Path("/elsewhere/My Repo"))
    assert store.path_for(Path("/")).name.startswith("root-")


def test_save_replaces_the_file_atomically_without_leftovers(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path)
    store.save(ROOT, {"n": 1})
    first_inode = store.path_for(ROOT).stat().st_ino
    store.save(ROOT, {"n": 2})
    assert store.load(ROOT) == {"n": 2}
    assert store.path_for(ROOT).stat().st_ino != first_inode
    assert [p.name for p in tmp_path.iterdir()] == [store.path_for(ROOT).name]


def test_unserialisable_payload_raises_and_keeps_the_previous_snapshot(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path)
    store.save(ROOT, {"n": 1})
    before = store.path_for(ROOT).read_bytes()
    with pytest.raises(SnapshotError, match="cannot be serialised"):
        store.save(ROOT, {"bad": {1, 2}})
    assert store.path_for(ROOT).read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == [store.path_for(ROOT).name]


def test_failed_write_raises_snapshot_error_and_keeps_the_previous_snapshot(
    tmp_path: Path,
) -> None:
    # A file-size limit makes the write itself fail (EFBIG), like a full disk would (ENOSPC).
    store = SnapshotStore(tmp_path)
    store.save(ROOT, {"n": 1})
    before = store.path_for(ROOT).read_bytes()
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, hard))
    try:
        with pytest.raises(SnapshotError, match="could not be written") as caught:
            store.save(ROOT, {"blob": "x" * 100_000})
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, previous)
    assert isinstance(caught.value.__cause__, OSError)
    assert caught.value.__cause__.errno == errno.EFBIG
    assert store.path_for(ROOT).read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == [store.path_for(ROOT).name]


def test_the_directory_is_fsynced_when_a_snapshot_is_created_not_on_each_replacement(
    tmp_path: Path,
) -> None:
    synced: list[str] = []

    def sync(fd: int) -> None:
        synced.append("directory" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file")
        os.fsync(fd)

    store = SnapshotStore(tmp_path / "new" / "workspaces", sync=sync)  # parents created
    store.save(ROOT, {"n": 1})
    store.save(ROOT, {"n": 2})
    store.save(OTHER, {"n": 1})
    assert synced == ["file", "directory", "file", "file", "directory"]
    assert store.load(ROOT) == {"n": 2}
    store.delete(ROOT)
    store.save(ROOT, {"n": 3})  # created again: its directory entry is made durable again
    assert synced[-2:] == ["file", "directory"]


def test_unwritable_directory_raises_snapshot_error(tmp_path: Path) -> None:
    blocker = tmp_path / "workspaces"
    blocker.write_text("a file where the directory should be", encoding="utf-8")
    with pytest.raises(SnapshotError):
        SnapshotStore(blocker).save(ROOT, {"n": 1})


def test_corrupt_snapshot_is_quarantined_and_reads_as_none(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = SnapshotStore(tmp_path)
    store.save(ROOT, {"n": 1})
    path = store.path_for(ROOT)
    path.write_bytes(path.read_bytes()[:20])
    with caplog.at_level(logging.WARNING, logger="live_memory.memory.snapshot_store"):
        assert store.load(ROOT) is None
    assert not path.exists()
    [moved] = quarantined(store)
    assert moved.name.startswith(path.stem) and moved.name.endswith(".corrupt.json")
    assert "not valid JSON" in caplog.text
    store.save(ROOT, {"n": 2})
    assert store.load(ROOT) == {"n": 2}


def test_unknown_format_version_is_quarantined(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path)
    path = store.path_for(ROOT)
    path.write_bytes(orjson.dumps({"format_version": 99, "root": str(ROOT), "state": {}}))
    assert store.load(ROOT) is None
    assert [p.name.endswith(".version.json") for p in quarantined(store)] == [True]


def test_snapshot_of_another_root_is_quarantined(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path)
    store.save(OTHER, {"n": 1})
    store.path_for(OTHER).rename(store.path_for(ROOT))
    assert store.load(ROOT) is None
    assert [p.name.endswith(".wrong-root.json") for p in quarantined(store)] == [True]


def test_non_object_state_is_quarantined(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path)
    doc = {"format_version": 1, "root": str(ROOT), "saved_at": "x", "state": [1]}
    store.path_for(ROOT).write_bytes(orjson.dumps(doc))
    assert store.load(ROOT) is None
    assert len(quarantined(store)) == 1


def test_delete_removes_the_snapshot_and_tolerates_absence(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path)
    store.save(ROOT, {"n": 1})
    store.delete(ROOT)
    store.delete(ROOT)
    assert not store.exists(ROOT)
    assert store.load(ROOT) is None


def test_concurrent_saves_for_different_roots_all_land(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path)
    roots = [Path(f"/srv/repo-{index}") for index in range(16)]
    errors: list[BaseException] = []

    def work(root: Path) -> None:
        try:
            for step in range(10):
                store.save(root, {"step": step, "root": str(root)})
                assert store.load(root) == {"step": step, "root": str(root)}
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(root,)) for root in roots]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert not errors
    assert all(store.load(root) == {"step": 9, "root": str(root)} for root in roots)


def test_stored_roots_are_listed_a_page_at_a_time_newest_first(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path / "workspaces")
    assert store.page_of_roots(0, 10) == ([], 0)  # no directory yet
    roots = [Path(f'/home/dev/p{i:02d} "quoted" \\ dir') for i in range(7)]
    for stamp, root in enumerate(roots, 1):
        store.save(root, {"history": ["x" * 20_000]})  # a state far longer than the head
        os.utime(store.path_for(root), (stamp, stamp))
    (store.directory / "notes.json").write_bytes(b'{"something": "else"}')
    (store.directory / "broken.json").write_bytes(b"\0" * 10)
    os.utime(store.directory / "notes.json", (100, 100))  # newest: skipped, still counted
    os.utime(store.directory / "broken.json", (0, 0))
    first, total = store.page_of_roots(0, 4)
    assert total == 9
    assert first == [(roots[6], 7.0), (roots[5], 6.0), (roots[4], 5.0)]
    rest, _ = store.page_of_roots(4, 4)
    assert [root for root, _ in rest] == [roots[3], roots[2], roots[1], roots[0]]
    assert store.page_of_roots(9, 4) == ([], 9)


def test_listing_reads_only_the_head_of_the_pages_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SnapshotStore(tmp_path / "workspaces")
    for i in range(30):
        store.save(Path(f"/w/{i}"), {"blob": "y" * 100_000})
    opened: list[int | None] = []
    real_read = snapshot_store.read_regular

    def counting_read(path: Path, max_bytes: int | None = None, **options: bool) -> bytes:
        opened.append(max_bytes)
        return real_read(path, max_bytes, **options)

    monkeypatch.setattr(snapshot_store, "read_regular", counting_read)
    page, total = store.page_of_roots(10, 5)
    assert (len(page), total) == (5, 30)
    assert opened == [8192] * 5  # five heads, no whole file


def test_an_unsettled_save_survives_a_crash_and_settles_on_the_next_load(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path)
    store.save(ROOT, {"n": 1})
    store.save(ROOT, {"n": 2}, settle=False)  # the server dies before settling it
    settled = store.path_for(ROOT)
    assert orjson.loads(settled.read_bytes())["state"] == {"n": 1}
    assert store.unsettled_path_for(ROOT).is_file() and store.exists(ROOT)
    restarted = SnapshotStore(tmp_path)
    assert restarted.load(ROOT) == {"n": 2}  # the newest state, not the settled one
    assert [p.name for p in tmp_path.iterdir()] == [settled.name]
    assert orjson.loads(settled.read_bytes())["state"] == {"n": 2}


def test_settle_makes_the_last_save_the_snapshot_and_is_idempotent(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path)
    store.save(ROOT, {"n": 1}, settle=False)
    assert not store.path_for(ROOT).exists()  # only the unsettled copy so far
    assert store.page_of_roots(0, 10) == ([], 0)  # never listed as a snapshot of its own
    store.settle(ROOT)
    store.settle(ROOT)  # nothing left to settle
    assert [p.name for p in tmp_path.iterdir()] == [store.path_for(ROOT).name]
    assert store.load(ROOT) == {"n": 1}


def test_an_unsettled_copy_a_power_loss_cut_short_is_set_aside_for_the_previous_snapshot(
    tmp_path: Path,
) -> None:
    store = SnapshotStore(tmp_path)
    store.save(ROOT, {"n": 1})
    store.save(ROOT, {"n": 2}, settle=False)
    unsettled = store.unsettled_path_for(ROOT)
    unsettled.write_bytes(b"\0" * 64)  # its bytes never reached the disk
    assert store.load(ROOT) == {"n": 1}
    [moved] = quarantined(store)
    assert ".unsettled" in moved.name and not unsettled.exists()


def test_a_failed_settle_raises_and_the_unsettled_state_still_loads(tmp_path: Path) -> None:
    def failing(fd: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    store = SnapshotStore(tmp_path, sync=failing)
    store.save(ROOT, {"n": 1}, settle=False)
    with pytest.raises(SnapshotError, match="could not be settled"):
        store.settle(ROOT)
    assert store.write_error is not None and "Input/output error" in store.write_error
    assert store.load(ROOT) == {"n": 1}
    store.delete(ROOT)  # both copies
    assert list(tmp_path.iterdir()) == [] and not store.exists(ROOT)


def test_a_save_during_a_settle_waits_for_no_fsync_and_is_settled_by_its_own(
    tmp_path: Path,
) -> None:
    syncing = threading.Event()
    release = threading.Event()

    def slow(fd: int) -> None:
        if not stat.S_ISDIR(os.fstat(fd).st_mode) and not release.is_set():
            syncing.set()
            assert release.wait(10)
        os.fsync(fd)

    store = SnapshotStore(tmp_path, sync=slow)
    store.save(ROOT, {"n": 1}, settle=False)
    settling = threading.Thread(target=store.settle, args=(ROOT,))
    settling.start()
    assert syncing.wait(10)
    store.save(ROOT, {"n": 2}, settle=False)  # not held up by the fsync under way
    release.set()
    settling.join(10)
    # The copy it synced was replaced meanwhile: it renamed nothing it had not synced.
    assert not store.path_for(ROOT).exists()
    store.settle(ROOT)
    assert orjson.loads(store.path_for(ROOT).read_bytes())["state"] == {"n": 2}


def test_a_fifo_in_place_of_a_snapshot_is_quarantined_without_blocking(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path)
    for fifo in (plant_fifo(store.path_for(ROOT)), plant_fifo(store.unsettled_path_for(ROOT))):
        assert without_blocking(lambda: store.load(ROOT), fifo) is None
    assert len(quarantined(store)) == 2
    store.save(ROOT, {"n": 1})
    assert store.load(ROOT) == {"n": 1}


def test_an_oversized_snapshot_is_refused_unread_and_quarantined(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tampered snapshot with a huge history is not parsed (only one byte past the cap is
    read): it is set aside, logged, and the workspace starts without it."""
    monkeypatch.setattr("live_memory.config.constants.SNAPSHOT_MAX_BYTES", 64 * 1024)
    store = SnapshotStore(tmp_path)
    store.save(ROOT, {"history": [{"role": "user", "kind": "question", "text": "x" * 70_000}]})
    path = store.path_for(ROOT)
    with caplog.at_level(logging.WARNING, logger="live_memory.memory.snapshot_store"):
        assert store.load(ROOT) is None
    [moved] = quarantined(store)
    assert moved.name.endswith(".oversized.json") and not path.exists()
    assert "SNAPSHOT_MAX_BYTES" in caplog.text
    store.save(ROOT, {"n": 2})
    assert store.load(ROOT) == {"n": 2}
