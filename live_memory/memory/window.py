"""Window B: the Live Memory's own conversation state for one workspace.

A plain object, owned serially by a workspace actor (forks work on a `copy()`). Between
compactions it only grows at the end: the frozen volatile block is rendered once by `freeze()`
and every later change reaches the model as an observation delta appended by `sync_deltas()`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Literal

from live_memory.config import constants as C
from live_memory.memory.file_table import (
    FileTable,
    block_chars,
    file_block,
    line_chars,
)
from live_memory.memory.history import History
from live_memory.memory.ledger import (
    demote_facts,
    merge_facts,
    rendered_ledger_chars,
)
from live_memory.memory.model import FileContext, FileSource, LedgerFact, Turn
from live_memory.memory.window_text import (
    PendingChange,
    delta_chars,
    frozen_chars,
    notes_chars,
    render_delta,
    render_frozen,
)

__all__ = ["PendingChange", "Window"]


class Window:
    """Everything one workspace remembers. Mutated only by its owner.

    The budget is kept incrementally: `files` is a `FileTable` and `history` a `History`, which
    keep their sizes current per change, and the ledger, tree, frozen block and pending
    changes are measured when they are set. Assigning a plain dict or list to `files` or
    `history` wraps it (one O(n) pass); mutating them in place is O(1) per change.
    """

    __slots__ = (
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

    @property
    def frozen(self) -> str | None:
        return self._frozen

    @frozen.setter
    def frozen(self, frozen: str | None) -> None:
        self._frozen = frozen
        self._frozen_len = len(frozen) if frozen is not None else 0

    # --- copying -------------------------------------------------------------------------
    def copy(self) -> Window:
        """An independent copy for a fork; records are immutable, so containers suffice."""
        clone = Window.__new__(Window)
        for name in Window.__slots__:
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
        return {name: getattr(self, name) for name in Window.__slots__}

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

    def add_note(self, line: str) -> None:
        """A line the next observation delta carries (the oldest dropped past the cap)."""
        self.notes.append(line)
        del self.notes[: -C.PENDING_NOTES_MAX]

    def demote(self, path: str) -> None:
        """Facts citing `path` are outdated (its bytes moved on)."""
        self._demote(path)

    def _demote(self, path: str) -> None:
        ledger, demoted = demote_facts(self._ledger, path)
        if demoted:
            self.ledger = ledger
            self.ledger_demotions += demoted

    # --- learning ------------------------------------------------------------------------
    def observe(
        self,
        path: str,
        content: str,
        sha256: str,
        size: int,
        *,
        source: FileSource = "observed",
        held_cap: int | None = None,
    ) -> bool:
        """Hold a file's current content (a teed read/write or a preload). True if new bytes.

        With `held_cap`, the least recently used observed content is then shed until the
        observed bytes held are at most `held_cap` (this file's too, if it alone is larger).
        """
        old = self._files.get(path)
        if old and old.sha256 == sha256 and old.content is not None and old.state == "current":
            self._files[path] = replace(old, last_used=self._tick())
            return False
        if old and old.source == "observed" and source == "preloaded":
            source = "observed"  # a live tee supersedes the preload flag
        if old is None:
            self._new_paths.add(path)
        self._files[path] = FileContext(
            path, sha256, size, source, "current", content, last_used=self._tick()
        )
        self._pend(path, "content")
        if path in self.recently_modified:
            self.recently_modified.remove(path)
        if held_cap is not None:
            self.shed_held(held_cap)
        if old is None:
            self._bound_manifest()
        return True

    def record_read(self, path: str, sha256: str, size: int) -> None:
        """The model read a file through its tools: remember it in the manifest."""
        old = self._files.get(path)
        if old and old.sha256 == sha256 and old.state == "current":
            self._files[path] = replace(old, last_used=self._tick())
            return
        keep = old.content if old and old.sha256 == sha256 else None
        source: FileSource = old.source if old and keep is not None else "read"
        self._files[path] = FileContext(path, sha256, size, source, "current", keep, self._tick())
        changed = old is not None and old.sha256 != sha256
        if changed:
            # The file moved on unannounced: facts citing it are as outdated as its old bytes.
            self._demote(path)
        if old and (old.state != "current" or changed):
            # The frozen block (or an earlier delta) may still show the old bytes as current.
            self._pend(path, "content" if keep is not None else "stale")
        if old is None:
            self._bound_manifest()

    def mark_stale(self, path: str) -> bool:
        """A known file changed on disk. True if the window knew it."""
        return self._mark(path, "stale")

    def mark_deleted(self, path: str) -> bool:
        """A known file disappeared. True if the window knew it."""
        return self._mark(path, "deleted")

    def _mark(self, path: str, state: Literal["stale", "deleted"]) -> bool:
        old = self._files.get(path)
        if old is None:
            return False
        if old.state != state:
            self._files[path] = replace(old, state=state, content=None)
            self._pend(path, state)
        self._demote(path)
        return True

    def note_modified(self, path: str) -> bool:
        """An edit without content: hint it on the next question if the window knows the file."""
        if path not in self._files or path in self.recently_modified:
            return False
        self.recently_modified.append(path)
        del self.recently_modified[: -C.RECENTLY_MODIFIED_HINT_MAX]
        return True

    def drain_recently_modified(self) -> list[str]:
        hints, self.recently_modified = self.recently_modified, []
        return hints

    # --- shedding (tier 0's free path and tier 1, no model call) -------------------------
    def shed_content(self, path: str) -> bool:
        """Drop the raw bytes held for `path`, keeping its manifest entry (it is re-readable
        from disk). True if bytes were held.

        Bytes the model already saw (frozen block, earlier delta) stay valid there. Bytes it
        has not seen yet are not sent: a file it knew in an older version is told as changed,
        a file new since the last delta simply appears in the next manifest.
        """
        ctx = self._files.get(path)
        if ctx is None or ctx.content is None:
            return False
        self._files[path] = replace(ctx, content=None, source="read")
        if self.pending.get(path) == "content":
            self._pend(path, None if path in self._new_paths else "stale")
        return True

    def shed_held(self, cap_bytes: int) -> list[str]:
        """Shed least recently used observed content until at most `cap_bytes` are held;
        returns the shed paths. O(1) per shed file."""
        shed: list[str] = []
        while self._files.held_bytes > cap_bytes:
            path = self._files.oldest_held()
            if path is None:
                break
            self.shed_content(path)
            shed.append(path)
        return shed

    def evict(self, path: str) -> bool:
        """Forget a file entirely (manifest entry included). True if it was known."""
        if path not in self._files:
            return False
        del self._files[path]
        self._pend(path, None)
        self._new_paths.discard(path)
        if path in self.recently_modified:
            self.recently_modified.remove(path)
        return True

    def _bound_manifest(self) -> None:
        """At most MANIFEST_MAX_FILES entries: the least recently set bare entry goes first."""
        while len(self._files) > C.MANIFEST_MAX_FILES:
            path = self._files.oldest_bare() or self._files.oldest_held()
            if path is None:
                break
            self.evict(path)

    def drop_turns(self, turns: Iterable[Turn]) -> int:
        """Remove exactly these turns (by identity) from the history; returns how many."""
        gone = {id(t) for t in turns}
        kept = [t for t in self._history if id(t) not in gone]
        removed = len(self._history) - len(kept)
        self.history = kept
        return removed

    # --- the prompt's frozen block and its deltas ---------------------------------------
    def freeze(self) -> None:
        """Render the volatile block anew (only at load and compaction) and drop the deltas
        (notes stay pending: the frozen block does not carry them)."""
        self.frozen = render_frozen(self._ledger, self._files)
        self.history = [t for t in self._history if t.kind not in ("observation", "ack")]
        notes = self.notes
        self._clear_pending()
        self.notes = notes

    def learn(self, facts: Iterable[LedgerFact], max_facts: int = C.MAX_LEDGER_FACTS) -> int:
        """Merge facts learnt outside a compaction (transcripts, imports) while the ledger
        holds fewer than `max_facts`; returns how many were new. They reach the model
        through the next observation delta."""
        merged = merge_facts(self._ledger, facts, max_facts)
        added = merged[len(self._ledger) :]
        self.ledger = merged
        self.learned += added
        self._learned_chars += sum(len(f.text) + 3 for f in added)
        return len(added)

    def sync_deltas(self) -> bool:
        """Append pending changes as one observation message (no ack). True if appended."""
        if self.frozen is None:
            self.freeze()
            return False
        if not self.pending and not self.ledger_demotions and not self.learned and not self.notes:
            return False
        text = render_delta(
            self._files, self.pending, self.learned, self.ledger_demotions, self.notes
        )
        self._history.append(Turn("user", "observation", text))
        self._clear_pending()
        return True

    def refresh(self, max_context_tokens: int, share: float = C.DELTA_REFREEZE_SHARE) -> bool:
        """Bring the prompt up to date before a question: append the pending changes as a
        delta or, once the deltas would pass `share` of the window, re-freeze instead (one
        current frozen block is cheaper than many superseded copies of a file). True when it
        re-froze. The shell decides when to call it (in place of `sync_deltas`)."""
        if self.would_refreeze(max_context_tokens, share):
            self.freeze()
            return True
        self.sync_deltas()
        return False

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

    def append_qa(self, question: str, answer: str) -> None:
        self._history.extend(
            [Turn("user", "question", question), Turn("assistant", "answer", answer)]
        )

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
