"""A small SQLite file shared by threads: WAL, one connection, one lock, short transactions.

Every method of a store is one short transaction, so a lock costs less than a connection per
thread and keeps `close()` simple. `check_same_thread=False` is safe only because of that lock.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Self

from live_memory.config.constants import SQLITE_BUSY_TIMEOUT_S
from live_memory.knowledge.error import KnowledgeError

__all__ = ["SqliteStore"]

logger = logging.getLogger(__name__)


class SqliteStore:
    """Base of the knowledge stores: opens `path`, creates `schema`, serialises access.

    Raises KnowledgeError when the database cannot be opened, read or written, and from any
    call after `close()`.
    """

    label = "store"
    """How errors and logs name the store ("transcript queue", "usage ledger")."""

    def __init__(self, path: Path, schema: str) -> None:
        self.path = path
        self._schema = schema
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._db = self._open()

    def _open(self) -> sqlite3.Connection:
        """A new connection in WAL mode with the schema created. Raises KnowledgeError."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(
                self.path,
                timeout=SQLITE_BUSY_TIMEOUT_S,
                isolation_level=None,
                check_same_thread=False,
            )
            try:
                db.execute("PRAGMA journal_mode=WAL")
                # WAL with NORMAL survives a process crash (kill -9); only an OS crash can lose
                # the last transactions, and a lost enqueue is re-sent by the next Stop hook.
                db.execute("PRAGMA synchronous=NORMAL")
                db.executescript(self._schema)
            except sqlite3.Error:
                db.close()
                raise
        except (OSError, sqlite3.Error) as exc:
            raise KnowledgeError(f"{self.label} {self.path} cannot be opened: {exc}") from exc
        return db

    def _connection(self) -> sqlite3.Connection:
        """The open connection (call with the lock held). Raises KnowledgeError once closed."""
        if self._db is None:
            raise KnowledgeError(f"{self.label} {self.path} is closed")
        return self._db

    def close(self) -> None:
        """Close the database; closing twice is harmless."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def delete(self) -> None:
        """Close the database for good and delete its files (the WAL and shared-memory files
        too): once closed no call re-creates them. Raises OSError when one cannot be deleted."""
        self.close()
        for suffix in ("", "-wal", "-shm", "-journal"):
            self.path.with_name(self.path.name + suffix).unlink(missing_ok=True)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """The connection inside BEGIN IMMEDIATE … COMMIT (ROLLBACK when the body raises)."""
        with self._lock:
            db = self._connection()
            try:
                db.execute("BEGIN IMMEDIATE")
                try:
                    yield db
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
                db.execute("COMMIT")
            except sqlite3.Error as exc:
                raise KnowledgeError(f"{self.label} {self.path}: {exc}") from exc
