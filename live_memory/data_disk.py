"""The data directory's disk: telling an error that means it cannot be written (full, over
quota, read-only) from any other, and whether it can be written again.

Activation opens and writes SQLite files and snapshots there; with the disk full each of those
fails deep inside a store, wrapped in the store's own error. `out_of_storage` finds the OS or
SQLite cause under any wrapping, so the edge answers StorageFull (507) at once; `DataDisk`
keeps the last such failure for /health until a probe write succeeds again. SQLite reports
some of these as a bare "disk I/O error": such an error counts when a probe write fails
for want of storage as well.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import sqlite3
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

from live_memory.errors import StorageFull

__all__ = ["DataDisk", "out_of_storage"]

logger = logging.getLogger(__name__)

_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS})
_FULL_SQLITE_CODES = frozenset({sqlite3.SQLITE_FULL, sqlite3.SQLITE_READONLY})
PROBE_BYTES = 4096
"""A probe write allocates one block, as the smallest real write (a WAL frame) would."""
CHAIN_DEPTH_MAX = 16
"""Causes followed at most (a cycle of causes must not loop)."""


def out_of_storage(error: BaseException) -> StorageFull | None:
    """A StorageFull for `error` when it, or what caused it, says the disk is full, over
    quota or read-only; else None (the error is something else, or not surely that)."""
    if isinstance(error, StorageFull):
        return error
    for seen in _chain(error):
        if (isinstance(seen, OSError) and seen.errno in _FULL_ERRNOS) or (
            isinstance(seen, sqlite3.Error) and _sqlite_code(seen) in _FULL_SQLITE_CODES
        ):
            return StorageFull(f"the data directory cannot be written: {error}")
    return None


def _chain(error: BaseException) -> Iterator[BaseException]:
    seen: BaseException | None = error
    for _ in range(CHAIN_DEPTH_MAX):
        if seen is None:
            return
        yield seen
        seen = seen.__cause__ or seen.__context__


def _sqlite_code(error: sqlite3.Error) -> int | None:
    code = getattr(error, "sqlite_errorcode", None)
    return code & 0xFF if isinstance(code, int) else None  # the primary code of an extended one


def _io_error(error: BaseException) -> bool:
    """SQLite says only "disk I/O error" when growing its shared-memory or WAL file fails."""
    return any(
        (isinstance(seen, sqlite3.Error) and _sqlite_code(seen) == sqlite3.SQLITE_IOERR)
        or (isinstance(seen, OSError) and seen.errno == errno.EIO)
        for seen in _chain(error)
    )


class DataDisk:
    """Whether the data directory can be written: a failure seen (`explain`) or a file system
    with no free block or mounted read-only is a problem until a probe write succeeds."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._failure: str | None = None
        self._lock = threading.Lock()

    def explain(self, error: BaseException) -> StorageFull | None:
        """StorageFull when `error` came of a want of storage, remembered for `problem`: a
        sure cause (`out_of_storage`), or an I/O error while a probe write fails for want
        of storage too; else None. Blocking (the probe): call it off the event loop."""
        full = out_of_storage(error)
        if full is None and _io_error(error):
            refused = self._probe()
            if refused is not None and refused.errno in _FULL_ERRNOS:
                full = StorageFull(
                    f"the data directory cannot be written: {error} ({refused.strerror})"
                )
        if full is not None:
            self._failure = str(full)
        return full

    def problem(self) -> str | None:
        """None when the data directory can be written, else why not. Blocking (statvfs,
        and a probe write when there is a reason to doubt): call it off the event loop."""
        suspect = self._failure
        with contextlib.suppress(OSError):
            stat = os.statvfs(self.path)
            if stat.f_flag & os.ST_RDONLY:
                suspect = suspect or f"the data directory {self.path} is on a read-only file system"
            elif stat.f_bavail == 0:
                suspect = suspect or f"no space left on the data directory's disk ({self.path})"
        if suspect is None:
            return None
        refused = self._probe()
        if refused is not None:
            return f"{suspect} (a probe write failed too: {refused.strerror or refused})"
        if self._failure is not None:
            logger.info("the data directory %s can be written again", self.path)
        self._failure = None
        return None

    def _probe(self) -> OSError | None:
        """Write one block in the data directory and remove it: None, or why it failed."""
        with self._lock:  # one probe at a time: concurrent callers share its verdict
            try:
                fd, name = tempfile.mkstemp(dir=self.path, prefix=".write-probe-")
                try:
                    os.write(fd, b"\0" * PROBE_BYTES)
                finally:
                    os.close(fd)
                    os.unlink(name)
            except OSError as exc:
                return exc
        return None
