"""Telling a want of storage from other failures, and when the data disk is writable again."""

from __future__ import annotations

import errno
import sqlite3
import subprocess
from pathlib import Path

import pytest

from live_memory.data_disk import DataDisk, out_of_storage
from live_memory.errors import StorageFull
from live_memory.knowledge import FactStore, KnowledgeError
from tests.support.small_disk import fill, small_disk


def _wrapped(cause: BaseException) -> KnowledgeError:
    try:
        try:
            raise cause
        except BaseException as exc:
            raise KnowledgeError(f"store: {exc}") from exc
    except KnowledgeError as outer:
        return outer


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EDQUOT, errno.EROFS])
def test_a_full_quota_or_read_only_cause_under_any_wrapping_is_storage_full(code: int) -> None:
    full = out_of_storage(_wrapped(OSError(code, "refused")))
    assert isinstance(full, StorageFull)
    assert "data directory cannot be written" in str(full)


def test_other_failures_are_not_taken_for_a_full_disk() -> None:
    assert out_of_storage(_wrapped(OSError(errno.EACCES, "denied"))) is None
    assert out_of_storage(_wrapped(sqlite3.OperationalError("no such table: x"))) is None
    assert out_of_storage(ValueError("x")) is None


def test_a_full_real_disk_is_reported_until_a_write_succeeds_again(tmp_path: Path) -> None:
    with small_disk(tmp_path / "disk", "1m") as disk:
        health = DataDisk(disk)
        assert health.problem() is None
        store_error: KnowledgeError | None = None
        fill(disk / "filler")
        try:  # a real store's write on the full disk, as activation makes it
            FactStore(disk / "facts.sqlite3", max_facts=10, retire_after_s=60.0)
        except KnowledgeError as exc:
            store_error = exc
        assert store_error is not None
        assert health.explain(store_error) is not None
        assert "cannot be written" in (health.problem() or "")
        (disk / "filler").unlink()
        assert health.problem() is None
        assert health.problem() is None  # and stays so: the failure is forgotten


def test_a_bare_sqlite_io_error_counts_as_a_full_disk_only_when_a_probe_write_fails_too(
    tmp_path: Path,
) -> None:
    with small_disk(tmp_path / "disk", "1m") as disk:
        health = DataDisk(disk)
        opened = FactStore(disk / "facts.sqlite3", max_facts=10, retire_after_s=60.0)
        opened.close()
        io_error = _wrapped(sqlite3.OperationalError("disk I/O error"))
        io_error.__cause__.sqlite_errorcode = sqlite3.SQLITE_IOERR_SHMSIZE  # type: ignore[union-attr]
        assert health.explain(io_error) is None  # the disk has room: some other I/O fault
        fill(disk / "filler")
        reopen_error: KnowledgeError | None = None
        try:  # reopening an existing WAL database on the full disk: "disk I/O error"
            FactStore(disk / "facts.sqlite3", max_facts=10, retire_after_s=60.0)
        except KnowledgeError as exc:
            reopen_error = exc
        assert reopen_error is not None
        full = health.explain(reopen_error)
        assert isinstance(full, StorageFull)
        assert health.problem() is not None


def test_a_read_only_data_disk_is_reported(tmp_path: Path) -> None:
    with small_disk(tmp_path / "disk", "1m") as disk:
        done = subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=False)
        if done.returncode != 0:
            pytest.skip("remounting the tmpfs read-only was refused")
        assert "read-only" in (DataDisk(disk).problem() or "")
