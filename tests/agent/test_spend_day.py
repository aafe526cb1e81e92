"""Spend and usage share one definition of "day": the usage ledger's UTC calendar day."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from live_memory.agent.spend import SpendGuard
from live_memory.config import Settings
from live_memory.errors import BudgetExhausted
from live_memory.knowledge import UsageLedger, utc_today
from live_memory.providers import Usage

NEW_YEAR = date(2027, 1, 1)


def test_the_default_day_is_the_utc_calendar_day(tmp_path: Path) -> None:
    before = datetime.now(UTC).date()
    with UsageLedger(tmp_path / "usage.sqlite3") as ledger:
        assert ledger.today() in {before, datetime.now(UTC).date()}
    assert utc_today() in {before, datetime.now(UTC).date()}


def test_spend_records_on_the_ledgers_day_and_resets_at_its_utc_midnight(tmp_path: Path) -> None:
    with UsageLedger(tmp_path / "usage.sqlite3", today=lambda: NEW_YEAR) as ledger:
        guard = SpendGuard(ledger, Settings(daily_budget_usd=1.0))
        guard.record("/repo", Usage(100, 10, 0, 0), 1.5, question=True)

        assert [row["day"] for row in ledger.by_day(days=1)] == ["2027-01-01"]
        report = guard.report("/repo")
        assert report["spent_today_usd"] == 1.5
        assert report["resets_at"] == "2027-01-02T00:00+00:00"
        with pytest.raises(BudgetExhausted, match="until 2027-01-02T00:00"):
            guard.check("/repo")
