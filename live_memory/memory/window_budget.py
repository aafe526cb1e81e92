"""The window's measured state: what one workspace holds, and its prompt budget in O(1).

`Window` (memory/window.py) changes this state; this base class holds it and keeps every
total the budget reads current as it changes (the files' and history's running sizes, the
ledger's rendered length, the frozen block's length, the pending delta's cost), so measuring
never walks the manifest. Split from the window so each module stays one concept: the state
and its measures here, the changes (learning, shedding, freezing) there.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Self

from live_memory.config import constants as C
from live_memory.memory.file_table import FileTable, block_chars, file_block, line_chars
from live_memory.memory.history import History
from live_memory.memory.ledger import rendered_ledger_chars
from live_memory.memory.model import FileContext, LedgerFact, Turn
from live_memory.memory.window_text import (
    PendingChange,
    delta_chars,
    frozen_chars,
    notes_chars,
)

__all__ = ["WindowBudget"]


class WindowBudget:
    """A window's fields and its measures. Mutated only by `Window`'s methods.

    The budget is kept incrementally: `files` is a `FileTable` and `history` a `History`, which
    keep their sizes current per change, and the ledger, tree, frozen block and pending
    changes are measured when they are set. Assigning a plain dict or list to `files` or
    `history` wraps it (one O(n) pass); mutating them in place is O(1) per change.
    """

    __slots__ = (
        "_cited",
        "_files",
        "_frozen",
        "_frozen_len",
        "_history",
        "_learned_chars",
        "_ledger",
        "_ledger_chars",
        "_new_paths",
        "_pending_chars",
        "_pending_cost",
        "_pending_notices",
        "chars_per_token",
        "clock",
        "compactions",
        "last_compaction_at",
        "learned",
        "ledger_demotions",
        "notes",
        "pending",
        "recently_modified",
        "root",
        "summaries_written",
        "tree",
    )

    def __init__(
        self,
        root: str,
        *,
        files: Mapping[str, FileContext] | None = None,
        history: Iterable[Turn] = (),
        ledger: Iterable[LedgerFact] = (),
        tree: str = "",
        frozen: str | None = None,
        chars_per_token: float = C.CHARS_PER_TOKEN,
        clock: int = 0,
    ) -> None:
        self.root = root
        self._files = FileTable(files or {})
        self._history = History(history)
        self._ledger: list[LedgerFact] = []
        self._ledger_chars = 0
        self._cited: frozenset[str] = frozenset()
        self.ledger = list(ledger)
        self.tree = tree
        self._frozen: str | None = None
        self._frozen_len = 0
        self.frozen = frozen
        self.pending: dict[str, PendingChange] = {}
        """Changes not yet told to the model. Read freely; written only by this class."""
        self._pending_cost: dict[str, int] = {}
        self._pending_chars = 0
        self._pending_notices = 0
        self._new_paths: set[str] = set()
        """Paths first seen since the last delta: shedding their content needs no notice."""
        self.ledger_demotions = 0
        self.learned: list[LedgerFact] = []
        """Facts added since the last freeze, not yet told to the model (a delta carries them)."""
        self._learned_chars = 0
        self.notes: list[str] = []
        """Lines for the next observation delta (earlier answers a change may have outdated);
        added with `add_note`, cleared with the other pending changes."""
        self.recently_modified: list[str] = []
        self.clock = clock
        self.chars_per_token = chars_per_token
        self.compactions = 0
        self.last_compaction_at: float | None = None
        self.summaries_written = 0

    # --- measured state ------------------------------------------------------------------
    @property
    def files(self) -> FileTable:
        return self._files

    @files.setter
    def files(self, files: Mapping[str, FileContext]) -> None:
        if files is not self._files:
            self._files = files.copy() if isinstance(files, FileTable) else FileTable(files)

    @property
    def history(self) -> History:
        return self._history

    @history.setter
    def history(self, turns: Iterable[Turn]) -> None:
        if turns is not self._history:
            self._history = turns.copy() if isinstance(turns, History) else History(turns)

    @property
    def ledger(self) -> list[LedgerFact]:
        """The facts; assign a new list to change them (the budget measures it then)."""
        return self._ledger

    @ledger.setter
    def ledger(self, facts: list[LedgerFact]) -> None:
        self._ledger = facts
        self._ledger_chars = rendered_ledger_chars(facts)
        self._cited = frozenset(src for fact in facts for src, _ in fact.sources)

    @property
    def frozen(self) -> str | None:
        return self._frozen

    @frozen.setter
    def frozen(self, frozen: str | None) -> None:
        self._frozen = frozen
        self._frozen_len = len(frozen) if frozen is not None else 0

    # --- copying -------------------------------------------------------------------------
    def copy(self) -> Self:
        """An independent copy for a fork; records are immutable, so containers suffice."""
        clone = type(self).__new__(type(self))
        for name in WindowBudget.__slots__:
            setattr(clone, name, getattr(self, name))
        clone._files = self._files.copy()
        clone._history = self._history.copy()
        clone._ledger = list(self._ledger)
        clone.pending = dict(self.pending)
        clone._pending_cost = dict(self._pending_cost)
        clone._new_paths = set(self._new_paths)
        clone.recently_modified = list(self.recently_modified)
        clone.learned = list(self.learned)
        clone.notes = list(self.notes)
        return clone

    def __getstate__(self) -> dict[str, object]:
        return {name: getattr(self, name) for name in WindowBudget.__slots__}

    def __setstate__(self, state: Mapping[str, object]) -> None:
        for name, value in state.items():
            setattr(self, name, value)

    def _tick(self) -> int:
        self.clock += 1
        return self.clock

    def _pend(self, path: str, kind: PendingChange | None) -> None:
        """Set (or, with None, clear) the change pending for `path`, keeping its cost: the
        characters it adds to the next delta (a file block, or a notice line)."""
        self._pending_chars -= self._pending_cost.pop(path, 0)
        if self.pending.get(path, "content") != "content":
            self._pending_notices -= 1
        if kind is None:
            self.pending.pop(path, None)
            return
        self.pending[path] = kind
        ctx = self._files.get(path)
        if kind != "content":
            cost = line_chars(path, kind)
            self._pending_notices += 1
        else:
            # sync_deltas renders a pending file only while it still holds content.
            cost = 0
            if ctx is not None and ctx.content is not None:
                cost = (block_chars(ctx) or len(file_block(ctx))) + 1
        self._pending_cost[path] = cost
        self._pending_chars += cost

    def _clear_pending(self) -> None:
        self.pending.clear()
        self._pending_cost.clear()
        self._pending_chars = 0
        self._pending_notices = 0
        self._new_paths.clear()
        self.ledger_demotions = 0
        self.learned.clear()
        self._learned_chars = 0
        self.notes = []

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
        return self.estimated_tokens()

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
