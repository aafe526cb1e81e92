"""Usage by day: folded per (day, workspace), aggregated per day, durable, thread-safe."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path

import pytest

from live_memory.knowledge import KnowledgeError, UsageLedger

TODAY = date(2026, 11, 30)
WS = "/home/dev/project"
OTHER = "/home/dev/other"


@pytest.fixture
def usage(tmp_path: Path) -> Iterator[UsageLedger]:
    with UsageLedger(tmp_path / "usage.sqlite3", today=lambda: TODAY) as ledger:
        yield ledger


def test_usage_is_summed_per_day_over_workspaces_newest_day_first(usage: UsageLedger) -> None:
    yesterday = TODAY - timedelta(days=1)
    usage.add(TODAY, WS, input=1000, output=200, cache_read=5000, cost_usd=0.01, questions=1)
    usage.add(TODAY, WS, input=500, output=100, cache_write=800, cost_usd=0.005, questions=1)
    usage.add(TODAY, OTHER, input=10, output=1, cost_usd=0.001, questions=1)
    usage.add(yesterday, WS, input=7, output=3, cost_usd=0.5, questions=2)

    assert usage.by_day() == [
        {
            "day": "2026-11-30",
            "questions": 3,
            "input": 1510,
            "output": 301,
            "cache_read": 5000,
            "cache_write": 800,
            "cost_usd": 0.016,
        },
        {
            "day": "2026-11-29",
            "questions": 2,
            "input": 7,
            "output": 3,
            "cache_read": 0,
            "cache_write": 0,
            "cost_usd": 0.5,
        },
    ]
    assert [row["questions"] for row in usage.by_day(workspace=OTHER)] == [1]


def test_by_day_covers_only_the_requested_number_of_days(usage: UsageLedger) -> None:
    for back in range(40):
        usage.add(TODAY - timedelta(days=back), WS, questions=1)

    assert len(usage.by_day()) == 30
    assert [row["day"] for row in usage.by_day(days=2)] == ["2026-11-30", "2026-11-29"]
    with pytest.raises(ValueError, match="days"):
        usage.by_day(days=0)


def test_today_totals_are_zero_before_any_use_then_count_workspaces(usage: UsageLedger) -> None:
    assert usage.today_totals() == {
        "day": "2026-11-30",
        "questions": 0,
        "input": 0,
        "output": 0,
        "cache_read": 0,
        "cache_write": 0,
        "cost_usd": 0.0,
        "workspaces": 0,
    }
    usage.add(TODAY, WS, cost_usd=0.02, questions=2)
    usage.add(TODAY, OTHER, cost_usd=0.01, questions=1)
    usage.add(TODAY - timedelta(days=1), OTHER, cost_usd=5.0, questions=9)

    totals = usage.today_totals()
    assert (totals["questions"], totals["cost_usd"], totals["workspaces"]) == (3, 0.03, 2)


def test_spent_today_is_per_workspace_or_overall(usage: UsageLedger) -> None:
    usage.add(TODAY, WS, cost_usd=0.25)
    usage.add(TODAY, OTHER, cost_usd=0.5)
    usage.add(TODAY - timedelta(days=1), WS, cost_usd=10.0)

    assert usage.spent_today(WS) == pytest.approx(0.25)
    assert usage.spent_today() == pytest.approx(0.75)
    assert usage.spent_today("/never/used") == 0.0


def test_usage_survives_reopening(tmp_path: Path) -> None:
    path = tmp_path / "usage.sqlite3"
    with UsageLedger(path, today=lambda: TODAY) as first:
        first.add(TODAY, WS, input=3, cost_usd=0.1, questions=1)
    with UsageLedger(path, today=lambda: TODAY) as second:
        assert second.today_totals()["questions"] == 1
        assert second.spent_today(WS) == pytest.approx(0.1)


def test_adds_from_many_threads_are_all_counted(usage: UsageLedger) -> None:
    def add_many() -> None:
        for _ in range(50):
            usage.add(TODAY, WS, input=2, output=1, questions=1)

    threads = [threading.Thread(target=add_many) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
        assert not thread.is_alive()

    totals = usage.today_totals()
    assert (totals["questions"], totals["input"], totals["output"]) == (400, 800, 400)


def test_negative_amounts_are_refused_and_a_closed_ledger_raises(usage: UsageLedger) -> None:
    with pytest.raises(ValueError, match="negative"):
        usage.add(TODAY, WS, input=-1)
    usage.close()
    with pytest.raises(KnowledgeError, match="closed"):
        usage.spent_today()
