"""How many workspace indexes hold an open SQLite connection at once.

An open connection costs about 130-175 KB of C heap (SQLite's first page-cache slab of 20
pages, its lookaside, the parsed schema, Python's statement cache), whether or not the
workspace is ever asked about. With one per active workspace, 1,000 workspaces activated
together held about 190 MB, and the C allocator keeps such a high-water mark after they are
all passivated (bench/workspaces_at_scale.py: RSS +191 MB after passivation). So at most
`limit` stores stay open; past it the least recently used one is parked (its connection
closed) and re-opens on its next use, which costs about a millisecond.

`ParkableStore` is the knowledge stores' SqliteStore with that ability: `_read()` and
`_transaction()` re-open a parked connection and report the use to its `OpenStores`.
"""

from __future__ import annotations

import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol

from live_memory.knowledge import SqliteStore

__all__ = ["OpenStores", "Parkable", "ParkableStore"]


class Parkable(Protocol):
    def park(self) -> object:
        """Close the connection until the next use."""


class OpenStores:
    """The least-recently-used order of the open stores. Thread-safe; `park` is called
    with no lock of ours held, so a store may hold its own lock while it reports a use."""

    def __init__(self, limit: int) -> None:
        self.limit = max(limit, 1)
        self._lock = threading.Lock()
        self._recent: OrderedDict[Parkable, None] = OrderedDict()
        self.parked = 0
        """How many times a store was parked (for /stats and tests)."""

    def used(self, store: Parkable) -> None:
        """`store` was just used (and is open): park the least recently used past the cap."""
        with self._lock:
            self._recent[store] = None
            self._recent.move_to_end(store)
            victims = [self._recent.popitem(last=False)[0] for _ in range(self._excess())]
            self.parked += len(victims)
        for victim in victims:
            victim.park()

    def forget(self, store: Parkable) -> None:
        """`store` was closed for good."""
        with self._lock:
            self._recent.pop(store, None)

    def __len__(self) -> int:
        return len(self._recent)

    def _excess(self) -> int:
        return max(len(self._recent) - self.limit, 0)


class ParkableStore(SqliteStore):
    """A SqliteStore whose connection `OpenStores` may close between uses (`park`)."""

    def __init__(self, path: Path, schema: str, open_stores: OpenStores | None = None) -> None:
        self._parked = False
        self._open_stores = open_stores
        super().__init__(path, schema)

    def _connection(self) -> sqlite3.Connection:
        if self._db is None and self._parked:
            self._db = self._open()
            self._parked = False
        return super()._connection()

    @property
    def closed(self) -> bool:
        """Closed for good (`close`): every use raises KnowledgeError."""
        return self._db is None and not self._parked

    def park(self) -> bool:
        """Close the connection until the next use; True if it was open."""
        with self._lock:
            if self._db is None:
                return False
            self._db.close()
            self._db = None
            self._parked = True
            return True

    def close(self) -> None:
        with self._lock:
            self._parked = False  # closed for good: no use re-opens it
        super().close()
        if self._open_stores is not None:
            self._open_stores.forget(self)

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """The connection under the lock, without a transaction (one statement reads)."""
        with self._lock:
            yield self._connection()
        self._used()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with super()._transaction() as db:
            yield db
        self._used()

    def _used(self) -> None:
        if self._open_stores is not None:
            self._open_stores.used(self)
