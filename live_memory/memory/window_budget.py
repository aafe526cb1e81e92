"""The window's prompt budget in O(1): every measure reads the totals its fields keep.

`WindowBudget` adds no state to `WindowFields` (memory/window_fields.py), which keeps the
files' and history's running sizes, the ledger's rendered length, the frozen block's length
and the pending delta's cost current as they change; so nothing here walks the manifest
(only `counts` and `known_hashes`, which report it). `Window` (memory/window.py) holds the
changes.
"""

from __future__ import annotations

from collections.abc import Mapping

from live_memory.config import constants as C
from live_memory.memory.window_fields import WindowFields
from live_memory.memory.window_text import delta_chars, frozen_chars, notes_chars

__all__ = ["WindowBudget"]


class WindowBudget(WindowFields):
    """A window's measures: what its next prompt costs, and when a freeze is due."""

    __slots__ = ()

    def would_refreeze(
        self, max_context_tokens: int, share: float = C.DELTA_REFREEZE_SHARE
    ) -> bool:
        """Whether `refresh` would re-freeze now rather than append the pending delta."""
        return self.frozen is not None and self.delta_share(max_context_tokens) > share

    def next_prompt_tokens(
        self, max_context_tokens: int, share: float = C.DELTA_REFREEZE_SHARE
    ) -> int:
        """Tokens of the next question's prompt under `refresh`'s rule: as it stands, or
        re-frozen when the deltas have passed `share` (what /stats reports as used)."""
        if self.would_refreeze(max_context_tokens, share):
            return self.refrozen_tokens()
        return self.fill_tokens()

    def fill_tokens(self) -> int:
        """The window's fill as compaction reads it: the prompt as it stands, or the one the
        next freeze would render when that is larger. Files first seen since the last freeze
        are in no prompt yet, but every freeze from the next on lists them: a flood of
        distinct paths must trigger the compaction that makes room for them."""
        return int(max(self.prompt_chars(), self.refrozen_chars()) / self.chars_per_token)

    # --- measuring (O(1): every total is kept as it changes) -----------------------------
    def static_chars(self) -> int:
        """len() of the block a freeze would render now (ledger, held files, manifest)."""
        return frozen_chars(self._ledger_chars, self._files)

    def pending_chars(self) -> int:
        """Characters the next observation delta would add (0: nothing pending)."""
        if not self.pending and not self.ledger_demotions and not self.learned and not self.notes:
            return 0
        return delta_chars(
            self._pending_chars,
            self._pending_notices,
            self._learned_chars,
            bool(self.learned),
            self.ledger_demotions,
        ) + notes_chars(self.notes)

    def delta_chars(self) -> int:
        """Characters of observation deltas: those in the history plus the pending one."""
        if self.frozen is None:
            return 0
        return self._history.delta_chars + self.pending_chars()

    def delta_share(self, max_context_tokens: int) -> float:
        """The deltas' share of a window of `max_context_tokens`."""
        return self.delta_chars() / self.chars_per_token / max(max_context_tokens, 1)

    def prompt_chars(self) -> int:
        """Characters of the next question's prompt as it stands (system prompt and tool
        definitions aside): tree, frozen block (or what a freeze would render), history with
        its deltas, and the delta still pending."""
        if self.frozen is None:
            return len(self.tree) + self.static_chars() + self._history.qa_chars
        return len(self.tree) + self._frozen_len + self._history.chars + self.pending_chars()

    def refrozen_chars(self) -> int:
        """Characters of the prompt right after a freeze: what compaction plans against."""
        return len(self.tree) + self.static_chars() + self._history.qa_chars

    def budget_chars(self) -> int:
        """Characters the budget counts: the prompt as it would be sent (deltas included)."""
        return self.prompt_chars()

    def estimated_tokens(self) -> int:
        return int(self.prompt_chars() / self.chars_per_token)

    def refrozen_tokens(self) -> int:
        return int(self.refrozen_chars() / self.chars_per_token)

    @property
    def held_bytes(self) -> int:
        """Bytes of observed file content held (the quantity the held-bytes cap bounds)."""
        return self._files.held_bytes

    def calibrate(self, estimated_chars: int, actual_tokens: int) -> None:
        """Fold one observed (chars sent, tokens billed) pair into the chars/token estimate."""
        if estimated_chars <= 0 or actual_tokens <= 0:
            return
        observed = min(max(estimated_chars / actual_tokens, C.CALIBRATION_MIN), C.CALIBRATION_MAX)
        alpha = C.CALIBRATION_EMA_ALPHA
        self.chars_per_token = (1 - alpha) * self.chars_per_token + alpha * observed

    @property
    def qa_turns(self) -> int:
        return self._history.qa_count

    def counts(self) -> Mapping[str, int]:
        states = [f.state for f in self._files.values()]
        return {
            "loaded": len(self._files),
            "with_content": sum(1 for f in self._files.values() if f.content is not None),
            "stale": states.count("stale"),
            "deleted": states.count("deleted"),
            "held_bytes": self._files.held_bytes,
        }

    def known_hashes(self) -> dict[str, str]:
        return {p: f.sha256 for p, f in self._files.items() if f.state == "current"}
