"""One workspace's symbol index on disk: SQLite (WAL) in the data directory.

One database per workspace (`<data>/index/<sha256(root)[:16]>.sqlite3`): a workspace's index
is dropped or rebuilt on its own, and a restart re-opens it instead of re-parsing the
repository (a file whose size, mtime and hash are unchanged is not parsed again).

Rows are keyed by path and carry the content hash they were parsed from. `refcount` keeps, per
name, how many files reference it, updated as files change, so ranking the core map is a
lookup, not a scan. Bounded: at most INDEX_MAX_FILES files, and per file the capped lists of
`extract_symbols`; SQLite's page cache is capped per connection, and at most
INDEX_OPEN_DATABASES_MAX connections are open at once (`OpenStores`: the least recently used
store is parked, and re-opens on its next use).

Thread safety: the knowledge stores' SqliteStore (one connection, one lock, WAL); every call
is short (one file's rows).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from live_memory.config import constants as C
from live_memory.index.extract import FileSymbols
from live_memory.index.open_stores import OpenStores, ParkableStore
from live_memory.knowledge import KnowledgeError

__all__ = ["FileStamp", "SymbolRow", "SymbolStore"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS files(
    path TEXT PRIMARY KEY, sha TEXT NOT NULL, language TEXT, size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL, skipped TEXT, errors INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS defs(
    path TEXT NOT NULL, name TEXT NOT NULL, qualified TEXT NOT NULL, kind TEXT NOT NULL,
    line INTEGER NOT NULL, signature TEXT NOT NULL, doc TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS defs_name ON defs(name COLLATE NOCASE);
CREATE INDEX IF NOT EXISTS defs_path ON defs(path);
CREATE TABLE IF NOT EXISTS refs(path TEXT NOT NULL, name TEXT NOT NULL, PRIMARY KEY(path, name))
    WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS refcount(name TEXT PRIMARY KEY, files INTEGER NOT NULL) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS refcount_files ON refcount(files);
CREATE TABLE IF NOT EXISTS imports(path TEXT NOT NULL, module TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS imports_path ON imports(path);
"""

_DEF_SELECT = "SELECT path, name, qualified, kind, line, signature, doc FROM defs "
"""The columns of a SymbolRow, in its order."""


@dataclass(frozen=True, slots=True)
class FileStamp:
    sha: str
    size: int
    mtime_ns: int


@dataclass(frozen=True, slots=True)
class SymbolRow:
    path: str
    name: str
    qualified: str
    kind: str
    line: int
    signature: str
    doc: str

    @property
    def location(self) -> str:
        return f"{self.path}:{self.line}"


class SymbolStore(ParkableStore):
    """Raises KnowledgeError like the other SQLite stores (the index thread logs it)."""

    label = "symbol index"

    def __init__(self, path: Path, open_stores: OpenStores | None = None) -> None:
        self.writes = 0
        """Write transactions since the last checkpoint (a parked store's close did one)."""
        self._files: int | None = None
        """Rows of `files`, counted once, then kept (only this store writes them)."""
        super().__init__(path, _SCHEMA, open_stores)
        self._upgrade()

    def _open(self) -> sqlite3.Connection:
        db = super()._open()
        try:
            db.execute(f"PRAGMA cache_size=-{C.INDEX_SQLITE_CACHE_KIB}")
            # No checkpoint inside a commit: the index thread runs one when idle (checkpoint).
            db.execute("PRAGMA wal_autocheckpoint=0")
        except sqlite3.Error as exc:
            db.close()
            raise KnowledgeError(f"{self.label} {self.path} cannot be opened: {exc}") from exc
        return db

    def park(self) -> bool:
        if not super().park():
            return False
        self.writes = 0  # the last connection's close checkpointed the WAL
        return True

    def checkpoint(self, min_writes: int = 1) -> bool:
        """Copy the WAL back into the database (PASSIVE: never waits on a reader) once at
        least `min_writes` transactions were written since the last one; True when one ran."""
        if self.writes < max(1, min_writes):
            return False
        with self._read() as db:
            db.execute("PRAGMA wal_checkpoint(PASSIVE)")
        self.writes = 0
        return True

    def _wrote(self) -> None:
        self.writes += 1
        if self.writes >= C.INDEX_WAL_CHECKPOINT_WRITES:  # no idle moment for that long
            self.checkpoint()

    def _upgrade(self) -> None:
        """An index of an older format is emptied (the next pass rebuilds it): one written
        before signatures were redacted may hold a secret on disk."""
        with self._transaction() as db:
            version = int(db.execute("PRAGMA user_version").fetchone()[0])
            if version >= C.INDEX_FORMAT_VERSION:
                return
            for table in ("files", "defs", "refs", "refcount", "imports"):
                db.execute(f"DELETE FROM {table}")
            db.execute(f"PRAGMA user_version={C.INDEX_FORMAT_VERSION}")

    # --- writing -------------------------------------------------------------------------
    def stamps(self) -> dict[str, FileStamp]:
        with self._read() as db:
            rows = db.execute("SELECT path, sha, size, mtime_ns FROM files").fetchall()
        return {p: FileStamp(sha, size, mtime) for p, sha, size, mtime in rows}

    def stamp(self, path: str) -> FileStamp | None:
        with self._read() as db:
            row = db.execute(
                "SELECT sha, size, mtime_ns FROM files WHERE path = ?", (path,)
            ).fetchone()
        return FileStamp(*row) if row else None

    def file_count(self) -> int:
        with self._read() as db:
            return int(db.execute("SELECT COUNT(*) FROM files").fetchone()[0])

    def put_many(self, items: Iterable[tuple[str, FileStamp, FileSymbols]]) -> int:
        """Replace the rows of each file (one transaction); how many were stored. New files
        past INDEX_MAX_FILES are not added (the index is full; known files still update)."""
        stored = 0
        with self._transaction() as db:
            count = self._files if self._files is not None else self._count(db)
            for path, stamp, symbols in items:
                known = db.execute("SELECT 1 FROM files WHERE path = ?", (path,)).fetchone()
                if known is None and count >= C.INDEX_MAX_FILES:
                    continue
                count += known is None
                # An edit rarely changes what a file references: only the difference touches
                # refs and refcount (and their indexes), so fewer pages go into the WAL.
                self._set_refs(db, path, symbols.references)
                for table in ("files", "defs", "imports"):
                    db.execute(f"DELETE FROM {table} WHERE path = ?", (path,))
                db.execute(
                    "INSERT INTO files VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        path,
                        stamp.sha,
                        symbols.language,
                        stamp.size,
                        stamp.mtime_ns,
                        symbols.skipped,
                        int(symbols.syntax_errors),
                    ),
                )
                db.executemany(
                    "INSERT INTO defs VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [
                        (path, d.name, d.qualified, d.kind, d.line, d.signature, d.doc)
                        for d in symbols.definitions
                    ],
                )
                db.executemany(
                    "INSERT INTO imports VALUES (?, ?)", [(path, m) for m in symbols.imports]
                )
                stored += 1
        self._files = count
        self._wrote()
        return stored

    def remove(self, paths: Iterable[str]) -> None:
        with self._transaction() as db:
            count = self._files if self._files is not None else self._count(db)
            for path in paths:
                self._set_refs(db, path, frozenset())
                for table in ("defs", "imports"):
                    db.execute(f"DELETE FROM {table} WHERE path = ?", (path,))
                count -= db.execute("DELETE FROM files WHERE path = ?", (path,)).rowcount
        self._files = count
        self._wrote()

    @staticmethod
    def _count(db: sqlite3.Connection) -> int:
        return int(db.execute("SELECT COUNT(*) FROM files").fetchone()[0])

    @staticmethod
    def _set_refs(db: sqlite3.Connection, path: str, names: frozenset[str]) -> None:
        """`path` references `names` now: refs and refcount follow the difference."""
        old = {r[0] for r in db.execute("SELECT name FROM refs WHERE path = ?", (path,))}
        gone, new = sorted(old - names), sorted(names - old)
        if gone:
            db.executemany(
                "DELETE FROM refs WHERE path = ? AND name = ?", [(path, n) for n in gone]
            )
            db.executemany(
                "UPDATE refcount SET files = files - 1 WHERE name = ?", [(n,) for n in gone]
            )
            db.execute("DELETE FROM refcount WHERE files <= 0")
        if new:
            db.executemany("INSERT INTO refs VALUES (?, ?)", [(path, n) for n in new])
            db.executemany(
                "INSERT INTO refcount VALUES (?, 1) "
                "ON CONFLICT(name) DO UPDATE SET files = files + 1",
                [(n,) for n in new],
            )

    # --- reading -------------------------------------------------------------------------
    def find(self, name: str, kind: str | None = None, limit: int = 50) -> list[SymbolRow]:
        """Definitions named `name` (case-insensitive; `A.b` also matches the qualified
        name), exact-case matches first, then by path and line."""
        short = name.rsplit(".", 1)[-1].rsplit("::", 1)[-1]
        sql = _DEF_SELECT
        sql += "WHERE name = ? COLLATE NOCASE"
        args: list[object] = [short]
        if kind:
            sql += " AND kind = ?"
            args.append(kind)
        with self._read() as db:
            rows = [SymbolRow(*r) for r in db.execute(sql, args).fetchall()]
        if short != name:
            wanted = name.replace("::", ".").lower()
            rows = [r for r in rows if r.qualified.lower().endswith(wanted)]
        rows.sort(key=lambda r: (r.name != short, r.path, r.line))
        return rows[:limit]

    def outline(self, path: str) -> tuple[list[SymbolRow], list[str], FileStamp | None]:
        with self._read() as db:
            defs = db.execute(
                _DEF_SELECT + "WHERE path = ? ORDER BY line",
                (path,),
            ).fetchall()
            imports = db.execute("SELECT module FROM imports WHERE path = ?", (path,)).fetchall()
        return [SymbolRow(*r) for r in defs], [m for (m,) in imports], self.stamp(path)

    def most_referenced(self, limit: int) -> list[tuple[SymbolRow, int]]:
        """Definitions of the most-referenced names, with how many files reference them."""
        with self._read() as db:
            top = db.execute(
                "SELECT name, files FROM refcount ORDER BY files DESC, name LIMIT ?", (limit,)
            ).fetchall()
            out: list[tuple[SymbolRow, int]] = []
            for name, files in top:
                for row in db.execute(
                    _DEF_SELECT + "WHERE name = ? COLLATE NOCASE",
                    (name,),
                ):
                    if row[1] == name:
                        out.append((SymbolRow(*row), int(files)))
        return out

    def definitions(self, limit: int) -> list[SymbolRow]:
        """Up to `limit` definitions by path and line (a core map for a repository where no
        definition is referenced from another file)."""
        with self._read() as db:
            rows = db.execute(
                _DEF_SELECT + "ORDER BY path, line LIMIT ?",
                (limit,),
            ).fetchall()
        return [SymbolRow(*r) for r in rows]

    def languages(self) -> dict[str, int]:
        with self._read() as db:
            rows = db.execute(
                "SELECT language, COUNT(*) FROM files WHERE language IS NOT NULL "
                "AND skipped IS NULL GROUP BY language ORDER BY language"
            ).fetchall()
        return {lang: int(n) for lang, n in rows}

    def languages_by_path(self) -> list[tuple[str, str]]:
        with self._read() as db:
            return db.execute(
                "SELECT path, language FROM files WHERE language IS NOT NULL AND skipped IS NULL"
            ).fetchall()

    def definition_count(self) -> int:
        with self._read() as db:
            return int(db.execute("SELECT COUNT(*) FROM defs").fetchone()[0])
