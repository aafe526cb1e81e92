"""The window's fields: what one workspace holds, with the running totals its budget reads.

`Window` (memory/window.py) changes this state and `WindowBudget` (memory/window_budget.py)
measures it; this base class holds it and keeps every total current as it changes (the
files' and history's running sizes, the ledger's rendered length, the frozen block's length,
the pending delta's cost), so measuring never walks the manifest. Split three ways so each
module stays one concept: the state here, its measures and its changes in their own modules.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Self

from live_memory.config import constants as C
from live_memory.memory.file_table import FileTable, block_chars, file_block, line_chars
from live_memory.memory.history import History
from live_memory.memory.ledger import rendered_ledger_chars
from live_memory.memory.model import FileContext, LedgerFact, Turn
from live_memory.memory.window_text import PendingChange

__all__ = ["WindowFields"]


class WindowFields:
    """A window's fields and the running totals its budget reads. Mutated only by `Window`'s
    methods; measured by `WindowBudget`.

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
        for name in WindowFields.__slots__:
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
        return {name: getattr(self, name) for name in WindowFields.__slots__}

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
