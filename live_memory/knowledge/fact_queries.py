"""Reading the fact store: the workspace's facts, its resident set, searches and counts.

The queries half of `FactStore` (which adds the writes): kept apart so each stays one
concept. Every method is one short transaction under the store's lock; a search is also cut
off after a deadline (an SQLite progress handler), so no caller waits long on it.
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import orjson

from live_memory.config import constants as C
from live_memory.knowledge.fact_merge import FactRow, GcPolicy
from live_memory.knowledge.sqlite_store import SqliteStore
from live_memory.memory import LedgerFact, query_terms

__all__ = ["COLUMNS", "FactQueries", "SearchResult", "StoredFact", "row_of", "ws_token"]

COLUMNS: Final = (
    "id, text, category, sources, first_confirmed, last_confirmed, uses, "
    "superseded_by, superseded_at, demoted_at, norm, signature"
)
F_COLUMNS: Final = ", ".join("f." + c.strip() for c in COLUMNS.split(","))
_PROGRESS_STEPS: Final = 1000  # SQLite VM steps between two deadline checks


@dataclass(frozen=True, slots=True)
class StoredFact:
    """A retrieved fact and its store id (what the window keeps to know it holds it)."""

    id: int
    fact: LedgerFact
    uses: int


@dataclass(frozen=True, slots=True)
class SearchResult:
    facts: list[StoredFact]
    """The best matches not already in the window, best first."""
    matched: int
    """Facts that matched, those left out as already in the window included."""


def ws_token(root: str) -> str:
    return "w" + hashlib.sha256(root.encode()).hexdigest()[:20]


def row_of(values: Sequence[Any]) -> FactRow:
    (fid, text, category, sources, first, last, uses, sup_by, sup_at, demoted, norm, sig) = values
    pairs = tuple((str(p), str(h)) for p, h in orjson.loads(sources))
    fact = LedgerFact(str(text), pairs, str(category), demoted is not None)
    return FactRow(int(fid), fact, first, last, int(uses), sup_by, sup_at, demoted, norm, sig)


class FactQueries(SqliteStore):
    """The read side of the fact store (see `FactStore`)."""

    label = "fact store"
    policy: GcPolicy
    """Set by `FactStore` (its garbage-collection policy; `counts` reports the cap)."""

    def current(self, root: str, limit: int | None = None) -> list[LedgerFact]:
        """The workspace's current facts (superseded ones aside), oldest first."""
        with self._transaction() as db:
            rows = db.execute(
                f"SELECT {COLUMNS} FROM facts WHERE workspace = ? AND superseded_by IS NULL "
                "ORDER BY id LIMIT ?",
                (root, -1 if limit is None else limit),
            ).fetchall()
        return [row_of(r).fact for r in rows]

    def rows(self, root: str) -> list[FactRow]:
        """Every row of `root`, superseded ones included (tests and the bench read them)."""
        with self._transaction() as db:
            rows = db.execute(
                f"SELECT {COLUMNS} FROM facts WHERE workspace = ? ORDER BY id", (root,)
            ).fetchall()
        return [row_of(r) for r in rows]

    def resident(self, root: str, max_chars: int, max_facts: int) -> list[LedgerFact]:
        """The resident set: the most used current facts (undemoted first, then the most
        recently confirmed) whose lines fit in `max_chars`, in the order they were learnt
        (so a re-freeze that keeps a fact keeps its place)."""
        chosen: list[FactRow] = []
        used = 0
        with self._transaction() as db:
            cursor = db.execute(
                f"SELECT {COLUMNS} FROM facts WHERE workspace = ? AND superseded_by IS NULL "
                "ORDER BY demoted_at IS NOT NULL, uses DESC, last_confirmed DESC, id DESC "
                "LIMIT ?",
                (root, max_facts),
            )
            for values in cursor:
                row = row_of(values)
                cost = len(row.fact.text) + 3
                if used + cost > max_chars:
                    continue
                chosen.append(row)
                used += cost
        return [r.fact for r in sorted(chosen, key=lambda r: r.id)]

    def search(
        self,
        root: str,
        question: str,
        *,
        limit: int,
        skip: frozenset[str] = frozenset(),
        deadline_s: float = C.RECALL_QUERY_DEADLINE_S,
    ) -> SearchResult:
        """The `limit` current facts that best match `question` (BM25 over text and
        identifiers, identifiers weighted double), less those whose normalised text is in
        `skip` (already in the window). The matches' use counts go up. A search that runs
        past `deadline_s` returns nothing rather than hold its caller."""
        terms = query_terms(question)
        if not terms or limit <= 0:
            return SearchResult([], 0)
        # Terms are [a-z0-9_]+ (query_terms), so quoting them is all the escaping needed.
        match = f'ws:"{ws_token(root)}" AND (' + " OR ".join(f'"{t}"' for t in terms) + ")"
        stop = time.monotonic() + deadline_s
        found: list[StoredFact] = []
        matched: list[tuple[int]] = []
        with self._transaction() as db:
            db.set_progress_handler(lambda: time.monotonic() > stop, _PROGRESS_STEPS)
            try:
                rows = db.execute(
                    f"SELECT {F_COLUMNS} "
                    "FROM facts_fts JOIN facts f ON f.id = facts_fts.rowid "
                    "WHERE facts_fts MATCH ? AND f.superseded_by IS NULL "
                    "ORDER BY bm25(facts_fts, 0.0, 1.0, 2.0) LIMIT ?",
                    (match, limit),
                ).fetchall()
            except sqlite3.OperationalError as exc:
                if "interrupt" not in str(exc):
                    raise
                rows = []
            finally:
                db.set_progress_handler(None, 0)
            for values in rows:
                row = row_of(values)
                matched.append((row.id,))
                if row.norm not in skip:
                    found.append(StoredFact(row.id, row.fact, row.uses + 1))
            # A match is a use, whether retrieval appends it or the window holds it already.
            db.executemany("UPDATE facts SET uses = uses + 1 WHERE id = ?", matched)
        return SearchResult(found, len(matched))

    def counts(self, root: str) -> dict[str, int]:
        """Stored, current, superseded and demoted facts of `root`."""
        with self._transaction() as db:
            stored, superseded, demoted = db.execute(
                "SELECT count(*), count(superseded_by), "
                "count(CASE WHEN superseded_by IS NULL THEN demoted_at END) "
                "FROM facts WHERE workspace = ?",
                (root,),
            ).fetchone()
        return {
            "stored": int(stored),
            "current": int(stored) - int(superseded),
            "superseded": int(superseded),
            "demoted": int(demoted),
            "max_facts": self.policy.max_facts,
        }
