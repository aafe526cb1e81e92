"""The durable fact store: every workspace's ledger facts in one SQLite file of the data dir.

One database per server, not per workspace, for the same reasons as the transcript queue and
the usage ledger: one connection and one lock for the process however many workspaces it
knows (a thousand passivated workspaces cost rows, not open files and WAL files), one file to
back up, and a wipe is a DELETE. Rows carry their workspace; the FTS5 index carries a
per-workspace token so a search only walks that workspace's postings.

Each fact keeps its provenance (path -> sha256 at distillation), category, first and last
confirmed time, use count (how often retrieval handed it to the model) and, once a newer
fact about the same subject arrived, the id of its successor. Merging follows
`fact_merge.decide`; garbage collection `fact_merge.gc_victims` (the SQL below orders rows by
the same `eviction_key`). The reads (resident set, search, counts) are `FactQueries`.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import orjson

from live_memory.config import constants as C
from live_memory.knowledge.fact_merge import GcPolicy, decide
from live_memory.knowledge.fact_queries import COLUMNS, FactQueries, row_of, ws_token
from live_memory.memory import LedgerFact, fact_identifiers, normalise_fact

__all__ = ["FactStore", "MergeReport"]

_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS facts (
    id INTEGER PRIMARY KEY,
    workspace TEXT NOT NULL,
    text TEXT NOT NULL,
    norm TEXT NOT NULL,
    signature TEXT NOT NULL,
    category TEXT NOT NULL,
    sources TEXT NOT NULL,
    first_confirmed REAL NOT NULL,
    last_confirmed REAL NOT NULL,
    uses INTEGER NOT NULL DEFAULT 0,
    superseded_by INTEGER,
    superseded_at REAL,
    demoted_at REAL
);
CREATE INDEX IF NOT EXISTS facts_norm ON facts (workspace, norm);
CREATE INDEX IF NOT EXISTS facts_signature ON facts (workspace, signature);
CREATE TABLE IF NOT EXISTS fact_sources (
    fact_id INTEGER NOT NULL,
    workspace TEXT NOT NULL,
    path TEXT NOT NULL,
    sha256 TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS fact_sources_path ON fact_sources (workspace, path);
CREATE INDEX IF NOT EXISTS fact_sources_fact ON fact_sources (fact_id);
CREATE VIRTUAL TABLE IF NOT EXISTS facts_fts USING fts5(
    ws, body, idents, tokenize = "unicode61 tokenchars '_'"
);
"""

_CANDIDATES_PER_KEY: Final = 64
"""Same-signature facts compared with a new one (newest first): a bound, not a filter."""


@dataclass(slots=True)
class MergeReport:
    added: int = 0
    confirmed: int = 0
    superseded: int = 0
    evicted: int = 0
    new_ids: list[int] = field(default_factory=list)


class FactStore(FactQueries):
    """Facts of all workspaces at `path`; safe to share between threads.

    Raises KnowledgeError when the database cannot be opened, read or written.
    """

    label = "fact store"

    def __init__(
        self,
        path: Path,
        *,
        max_facts: int = C.MAX_STORED_FACTS,
        retire_after_s: float = C.FACT_RETIRE_AFTER_S,
        clock: Any = time.time,
    ) -> None:
        self.policy = GcPolicy(max_facts, retire_after_s)
        self.clock = clock
        super().__init__(path, _SCHEMA)

    # --- writing ------------------------------------------------------------------------
    def merge(self, root: str, facts: Iterable[LedgerFact]) -> MergeReport:
        """Add `facts` in order (each may confirm or supersede one stored), then collect
        garbage past the cap. One transaction."""
        report = MergeReport()
        now = self.clock()
        with self._transaction() as db:
            for fact in facts:
                if fact.text.strip():
                    self._merge_one(db, root, fact, now, report)
            report.evicted = self._collect(db, root, now)
        return report

    def merge_in_chunks(self, root: str, facts: Sequence[LedgerFact], chunk: int) -> MergeReport:
        """`merge` in transactions of `chunk` facts: the store's lock is released between
        them, so another thread's search or wipe waits one chunk, not the whole batch.
        Merging is idempotent, so a batch cut short by a failure is completed by a retry."""
        total = MergeReport()
        for start in range(0, len(facts), max(1, chunk)):
            part = self.merge(root, facts[start : start + max(1, chunk)])
            total.added += part.added
            total.confirmed += part.confirmed
            total.superseded += part.superseded
            total.evicted += part.evicted
            total.new_ids.extend(part.new_ids)
        return total

    def forget(self, root: str, ids: Iterable[int]) -> int:
        """Delete the facts `ids` of `root` (an import a wipe overtook); returns how many."""
        with self._transaction() as db:
            wanted = [int(i) for i in ids]
            found = [
                int(r[0])
                for start in range(0, len(wanted), 500)
                for r in db.execute(
                    "SELECT id FROM facts WHERE workspace = ? AND id IN "
                    f"({','.join('?' * len(wanted[start : start + 500]))})",
                    (root, *wanted[start : start + 500]),
                )
            ]
            self._delete(db, found)
        return len(found)

    def _merge_one(
        self, db: sqlite3.Connection, root: str, fact: LedgerFact, now: float, report: MergeReport
    ) -> None:
        idents = fact_identifiers(fact.text)
        norm = normalise_fact(fact.text)
        signature = " ".join(sorted({name.lower() for name in idents}))  # = fact_signature
        # Two indexed look-ups (an OR of the two would scan the workspace's rows).
        rows = db.execute(
            f"SELECT {COLUMNS} FROM facts WHERE workspace = ? AND norm = ? "
            "AND superseded_by IS NULL LIMIT 1",
            (root, norm),
        ).fetchall()
        if not rows:
            rows = db.execute(
                f"SELECT {COLUMNS} FROM facts WHERE workspace = ? AND signature = ? "
                "AND superseded_by IS NULL ORDER BY id DESC LIMIT ?",
                (root, signature, _CANDIDATES_PER_KEY),
            ).fetchall()
        decision, target = decide(fact, [row_of(r) for r in rows], key=(norm, signature))
        if decision == "confirm" and target is not None:
            sources = fact.sources or target.fact.sources
            demoted = None if not fact.stale else (target.demoted_at or now)
            db.execute(
                "UPDATE facts SET last_confirmed = ?, sources = ?, demoted_at = ? WHERE id = ?",
                (now, orjson.dumps(sources).decode(), demoted, target.id),
            )
            self._set_sources(db, root, target.id, sources)
            report.confirmed += 1
            return
        uses = target.uses if target is not None else 0
        cursor = db.execute(
            "INSERT INTO facts (workspace, text, norm, signature, category, sources, "
            "first_confirmed, last_confirmed, uses, demoted_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                root,
                fact.text,
                norm,
                signature,
                fact.category,
                orjson.dumps(fact.sources).decode(),
                now,
                now,
                uses,
                now if fact.stale else None,
            ),
        )
        fid = int(cursor.lastrowid or 0)
        self._set_sources(db, root, fid, fact.sources)
        db.execute(
            "INSERT INTO facts_fts (rowid, ws, body, idents) VALUES (?, ?, ?, ?)",
            (fid, ws_token(root), fact.text, " ".join(idents)),
        )
        report.new_ids.append(fid)
        if decision == "supersede" and target is not None:
            db.execute(
                "UPDATE facts SET superseded_by = ?, superseded_at = ? WHERE id = ?",
                (fid, now, target.id),
            )
            db.execute("DELETE FROM facts_fts WHERE rowid = ?", (target.id,))
            report.superseded += 1
        else:
            report.added += 1

    @staticmethod
    def _set_sources(
        db: sqlite3.Connection, root: str, fid: int, sources: Sequence[tuple[str, str]]
    ) -> None:
        db.execute("DELETE FROM fact_sources WHERE fact_id = ?", (fid,))
        db.executemany(
            "INSERT INTO fact_sources (fact_id, workspace, path, sha256) VALUES (?, ?, ?, ?)",
            [(fid, root, p, h) for p, h in sources],
        )

    def _collect(self, db: sqlite3.Connection, root: str, now: float) -> int:
        """`gc_victims` in SQL: the retired, then the first past the cap in eviction order."""
        horizon = now - self.policy.retire_after_s
        victims = [
            int(r[0])
            for r in db.execute(
                "SELECT id FROM facts WHERE workspace = ? AND "
                "(superseded_at < ? OR demoted_at < ?)",
                (root, horizon, horizon),
            )
        ]
        (count,) = db.execute("SELECT count(*) FROM facts WHERE workspace = ?", (root,)).fetchone()
        excess = int(count) - len(victims) - self.policy.max_facts
        if excess > 0:
            victims += [
                int(r[0])
                for r in db.execute(
                    "SELECT id FROM facts WHERE workspace = ? AND NOT "
                    "(coalesce(superseded_at < ?, 0) OR coalesce(demoted_at < ?, 0)) ORDER BY "
                    "CASE WHEN superseded_by IS NOT NULL THEN 0 "
                    "WHEN demoted_at IS NOT NULL THEN 1 ELSE 2 END, "
                    "CASE WHEN superseded_by IS NOT NULL THEN coalesce(superseded_at, 0) "
                    "WHEN demoted_at IS NOT NULL THEN demoted_at ELSE uses END, "
                    "CASE WHEN superseded_by IS NULL AND demoted_at IS NULL "
                    "THEN last_confirmed ELSE 0 END, id LIMIT ?",
                    (root, horizon, horizon, excess),
                )
            ]
        self._delete(db, victims)
        return len(victims)

    @staticmethod
    def _delete(db: sqlite3.Connection, ids: Sequence[int]) -> None:
        rows = [(i,) for i in ids]
        db.executemany("DELETE FROM facts WHERE id = ?", rows)
        db.executemany("DELETE FROM fact_sources WHERE fact_id = ?", rows)
        db.executemany("DELETE FROM facts_fts WHERE rowid = ?", rows)

    def demote(self, root: str, current: Mapping[str, str | None]) -> int:
        """Facts citing a path of `current` whose sha256 differs from theirs (None: the file
        is gone or changed unread) become demoted; returns how many were newly demoted."""
        if not current:
            return 0
        now = self.clock()
        demoted: set[int] = set()
        with self._transaction() as db:
            for path, digest in current.items():
                for fid, sha in db.execute(
                    "SELECT s.fact_id, s.sha256 FROM fact_sources s JOIN facts f "
                    "ON f.id = s.fact_id WHERE s.workspace = ? AND s.path = ? "
                    "AND f.demoted_at IS NULL",
                    (root, path),
                ):
                    if sha != digest:
                        demoted.add(int(fid))
            db.executemany(
                "UPDATE facts SET demoted_at = ? WHERE id = ?", [(now, i) for i in demoted]
            )
        return len(demoted)

    def wipe_all_but(self, keep: Collection[str]) -> set[str]:
        """Forget every fact of every workspace not in `keep`; returns those workspaces."""
        kept = set(keep)
        with self._transaction() as db:
            rows = db.execute("SELECT id, workspace FROM facts").fetchall()
            gone = [(int(i), str(w)) for i, w in rows if w not in kept]
            self._delete(db, [i for i, _ in gone])
        return {w for _, w in gone}

    def wipe(self, root: str) -> int:
        """Forget every fact of `root`; returns how many."""
        with self._transaction() as db:
            ids = [
                int(r[0]) for r in db.execute("SELECT id FROM facts WHERE workspace = ?", (root,))
            ]
            self._delete(db, ids)
        return len(ids)
