"""Tokens, cost and questions per day and per workspace, kept durably (SQLite in the data dir).

One row per (day, workspace); `add` folds a question's (or a distillation's) usage into it.
A day is a UTC calendar day (`utc_today`; the clock is injectable): the one definition used by
the usage report, the banner and the daily budgets (`agent.spend`), so a budget resets at UTC
midnight whatever the server's time zone, and two servers in different zones agree.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from live_memory.config.constants import USAGE_BY_DAY_DEFAULT_DAYS
from live_memory.knowledge.sqlite_store import SqliteStore

__all__ = ["UsageLedger"]

logger = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS usage (
    day TEXT NOT NULL,
    workspace TEXT NOT NULL,
    input INTEGER NOT NULL DEFAULT 0,
    output INTEGER NOT NULL DEFAULT 0,
    cache_read INTEGER NOT NULL DEFAULT 0,
    cache_write INTEGER NOT NULL DEFAULT 0,
    cost_usd REAL NOT NULL DEFAULT 0,
    questions INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (day, workspace)
);
"""
_SUMS = "SUM(questions), SUM(input), SUM(output), SUM(cache_read), SUM(cache_write), SUM(cost_usd)"


def utc_today() -> date:
    """Today's UTC calendar day: what "day" means for usage and spend."""
    return datetime.now(UTC).date()


class UsageLedger(SqliteStore):
    """Usage by day stored at `path`; safe to share between threads.

    Raises KnowledgeError when the database cannot be opened or written (and after `close()`).
    """

    label = "usage ledger"

    def __init__(self, path: Path, *, today: Callable[[], date] | None = None) -> None:
        self.today: Callable[[], date] = today or utc_today
        """Today's day, as this ledger counts days (UTC unless a test injects a clock)."""
        super().__init__(path, _SCHEMA)

    def add(
        self,
        day: date,
        workspace: str,
        *,
        input: int = 0,
        output: int = 0,
        cache_read: int = 0,
        cache_write: int = 0,
        cost_usd: float = 0.0,
        questions: int = 0,
    ) -> None:
        """Fold usage into (day, workspace). Raises ValueError for a negative amount."""
        amounts = (input, output, cache_read, cache_write, cost_usd, questions)
        if any(amount < 0 for amount in amounts):
            raise ValueError(f"usage amounts must not be negative, got {amounts}")
        with self._transaction() as db:
            db.execute(
                "INSERT INTO usage (day, workspace, input, output, cache_read, cache_write, "
                "cost_usd, questions) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (day, workspace) DO UPDATE SET "
                "input = input + excluded.input, output = output + excluded.output, "
                "cache_read = cache_read + excluded.cache_read, "
                "cache_write = cache_write + excluded.cache_write, "
                "cost_usd = cost_usd + excluded.cost_usd, "
                "questions = questions + excluded.questions",
                (day.isoformat(), workspace, *amounts[:4], cost_usd, questions),
            )

    def by_day(
        self, days: int = USAGE_BY_DAY_DEFAULT_DAYS, workspace: str | None = None
    ) -> list[dict[str, object]]:
        """Totals of each of the last `days` days (today included) that saw any usage, newest
        first: `{day, questions, input, output, cache_read, cache_write, cost_usd}`.

        Raises ValueError for `days` < 1.
        """
        if days < 1:
            raise ValueError(f"days must be >= 1, got {days}")
        first = (self.today() - timedelta(days=days - 1)).isoformat()
        where, args = "WHERE day >= ?", [first]
        if workspace is not None:
            where, args = where + " AND workspace = ?", [first, workspace]
        with self._transaction() as db:
            rows = db.execute(
                f"SELECT day, {_SUMS} FROM usage {where} GROUP BY day ORDER BY day DESC", args
            ).fetchall()
        return [_totals(row[1:], day=row[0]) for row in rows]

    def today_totals(self) -> dict[str, object]:
        """Today's totals over all workspaces, zeros when nothing happened yet, plus
        `workspaces` (how many were used today)."""
        today = self.today().isoformat()
        with self._transaction() as db:
            row = db.execute(
                f"SELECT {_SUMS}, COUNT(*) FROM usage WHERE day = ?", (today,)
            ).fetchone()
        totals = _totals(row[:6], day=today)
        totals["workspaces"] = int(row[6])
        return totals

    def today_by_workspace(self) -> dict[str, dict[str, object]]:
        """Today's totals of each workspace used today (the dashboard's overview)."""
        today = self.today().isoformat()
        with self._transaction() as db:
            rows = db.execute(
                f"SELECT workspace, {_SUMS} FROM usage WHERE day = ? GROUP BY workspace", (today,)
            ).fetchall()
        return {str(row[0]): _totals(row[1:], day=today) for row in rows}

    def all_time(self, workspace: str) -> dict[str, object]:
        """One workspace's totals over every day recorded (answers and distillation alike,
        across resets: the money was spent)."""
        with self._transaction() as db:
            row = db.execute(
                f"SELECT {_SUMS} FROM usage WHERE workspace = ?", (workspace,)
            ).fetchone()
        return _totals(row, day="all")

    def spent_today(self, workspace: str | None = None) -> float:
        """Today's cost in USD, of one workspace or of all (for the daily budgets)."""
        where, args = "WHERE day = ?", [self.today().isoformat()]
        if workspace is not None:
            where, args = where + " AND workspace = ?", [*args, workspace]
        with self._transaction() as db:
            row = db.execute(f"SELECT COALESCE(SUM(cost_usd), 0) FROM usage {where}", args)
            return float(row.fetchone()[0])


def _totals(sums: tuple[object, ...], *, day: str) -> dict[str, object]:
    questions, input_, output, cache_read, cache_write, cost = (_number(v) for v in sums)
    return {
        "day": day,
        "questions": int(questions),
        "input": int(input_),
        "output": int(output),
        "cache_read": int(cache_read),
        "cache_write": int(cache_write),
        "cost_usd": round(cost, 6),
    }


def _number(value: object) -> float:
    return float(value) if isinstance(value, int | float) else 0.0
