"""Window B and its pure logic: window, ledger, layout, compaction, commit rule, snapshots."""

from __future__ import annotations

from live_memory.memory.model import FileContext, LedgerFact, Turn
from live_memory.memory.window import Window

__all__ = ["FileContext", "LedgerFact", "Turn", "Window"]
