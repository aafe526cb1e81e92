"""The data directory's disk: telling an error that means it cannot be written (full, over
quota, read-only) from any other, and whether it can be written again.

Activation opens and writes SQLite files and snapshots there; with the disk full each of those
fails deep inside a store, wrapped in the store's own error. `out_of_storage` finds the OS or
SQLite cause under any wrapping, so the edge answers StorageFull (507) at once; `DataDisk`
keeps the last such failure for /health until a probe write succeeds again.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import sqlite3
import tempfile
import threading
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
    quota or read-only; else None (the error is something else)."""
    if isinstance(error, StorageFull):
        return error
    seen: BaseException | None = error
    for _ in range(CHAIN_DEPTH_MAX):
        if seen is None:
            return None
        if (isinstance(seen, OSError) and seen.errno in _FULL_ERRNOS) or (
            isinstance(seen, sqlite3.Error)
            and getattr(seen, "sqlite_errorcode", None) in _FULL_SQLITE_CODES
        ):
            return StorageFull(f"the data directory cannot be written: {error}")
        seen = seen.__cause__ or seen.__context__
    return None


class DataDisk:
    """Whether the data directory can be written: a failure seen (`failed`) or a file system
    with no free block or mounted read-only is a problem until a probe write succeeds."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._failure: str | None = None
        self._lock = threading.Lock()

    def failed(self, error: StorageFull) -> None:
        """Remember a write that failed for want of storage (any thread)."""
        self._failure = str(error)

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
        with self._lock:  # one probe at a time: concurrent /health calls share its verdict
            try:
                fd, name = tempfile.mkstemp(dir=self.path, prefix=".write-probe-")
                try:
                    os.write(fd, b"\0" * PROBE_BYTES)
                finally:
                    os.close(fd)
                    os.unlink(name)
            except OSError as exc:
                return f"{suspect} (a probe write failed too: {exc.strerror or exc})"
        if self._failure is not None:
            logger.info("the data directory %s can be written again", self.path)
        self._failure = None
        return None
