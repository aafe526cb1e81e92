"""Daily spend guardrails: global and per-workspace budgets in USD.

A day is the usage ledger's day: a UTC calendar day (`knowledge.utc_today`), so budgets reset
at UTC midnight.

Background work (keep-warm pings, distillation) stops first, once a budget is nearly spent;
questions are refused with a clear "budget exhausted until …" once it is spent, before any
model call is made.
"""

from __future__ import annotations

import logging
from datetime import UTC, date, datetime, time, timedelta

from live_memory.config import Settings
from live_memory.config import constants as C
from live_memory.errors import BudgetExhausted
from live_memory.knowledge import UsageLedger
from live_memory.providers import Usage

__all__ = ["SpendGuard"]

logger = logging.getLogger(__name__)


class SpendGuard:
    """Thread-safe (the ledger serialises its writes); shared by every workspace actor."""

    def __init__(self, ledger: UsageLedger, settings: Settings) -> None:
        self.ledger = ledger
        self.daily = settings.daily_budget_usd
        self.per_workspace = settings.workspace_daily_budget_usd

    def record(self, workspace: str, usage: Usage, cost: float | None, *, question: bool) -> None:
        self.ledger.add(
            self.ledger.today(),
            workspace,
            input=usage.input_tokens,
            output=usage.output_tokens,
            cache_read=usage.cache_read_tokens,
            cache_write=usage.cache_write_tokens,
            cost_usd=cost or 0.0,
            questions=int(question),
        )

    def _fractions(self, workspace: str | None) -> list[float]:
        """Each configured budget's spent share today (1.0 = exhausted)."""
        used = []
        if self.daily is not None:
            used.append(self.ledger.spent_today(None) / self.daily)
        if self.per_workspace is not None and workspace is not None:
            used.append(self.ledger.spent_today(workspace) / self.per_workspace)
        return used

    def check(self, workspace: str) -> None:
        """Raise BudgetExhausted when a daily budget is spent (no model call may be made)."""
        if any(f >= 1.0 for f in self._fractions(workspace)):
            raise BudgetExhausted(
                f"daily spend budget exhausted until {_next_midnight(self.ledger.today())} "
                "(LIVE_MEMORY_DAILY_BUDGET_USD / LIVE_MEMORY_WORKSPACE_DAILY_BUDGET_USD)"
            )

    def background_paused(self, workspace: str) -> bool:
        """True once a budget is nearly spent: keep-warm and distillation stop first."""
        return any(f >= C.BUDGET_BACKGROUND_STOP_FRACTION for f in self._fractions(workspace))

    def report(self, workspace: str | None = None) -> dict[str, object]:
        """Spend against budget for `/stats` (with a workspace) and `/health` (without)."""
        body: dict[str, object] = {
            "daily_usd": self.daily,
            "spent_today_usd": round(self.ledger.spent_today(None), 6),
            "resets_at": _next_midnight(self.ledger.today()),
        }
        if workspace is not None:
            body["workspace_daily_usd"] = self.per_workspace
            body["workspace_spent_today_usd"] = round(self.ledger.spent_today(workspace), 6)
        fractions = self._fractions(workspace)
        body["exhausted"] = any(f >= 1.0 for f in fractions)
        body["background_paused"] = any(f >= C.BUDGET_BACKGROUND_STOP_FRACTION for f in fractions)
        return body


def _next_midnight(today: date) -> str:
    """The UTC midnight that ends the ledger's `today`."""
    tomorrow = today + timedelta(days=1)
    return datetime.combine(tomorrow, time(0, 0), UTC).isoformat(timespec="minutes")
