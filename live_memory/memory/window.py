"""Window B: the Live Memory's own conversation state for one workspace.

A plain object, owned serially by a workspace actor (forks work on a `copy()`). Between
compactions it only grows at the end: the frozen volatile block is rendered once by `freeze()`
and every later change reaches the model as an observation delta appended by `sync_deltas()`.
Its fields live in `WindowFields` (memory/window_fields.py), its O(1) measures in
`WindowBudget` (memory/window_budget.py); this module holds the changes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Literal

from live_memory.config import constants as C
from live_memory.memory.ledger import demote_facts, merge_facts
from live_memory.memory.model import RETRIEVAL_KIND, FileContext, FileSource, LedgerFact, Turn
from live_memory.memory.window_budget import WindowBudget
from live_memory.memory.window_text import PendingChange, render_delta, render_frozen

__all__ = ["PendingChange", "Window"]


class Window(WindowBudget):
    """Everything one workspace remembers. Mutated only by its owner."""

    __slots__ = ()

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
        if self.held_content(path, sha256) is not None and old is not None:
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
            self.bound_manifest()
        return True

    def held_content(self, path: str, sha256: str) -> str | None:
        """The content held for `path` when it is current and has this hash (`observe` of
        the same bytes then only marks the file used), else None."""
        old = self._files.get(path)
        if old and old.sha256 == sha256 and old.content is not None and old.state == "current":
            return old.content
        return None

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
            self.bound_manifest()

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

    def demote_cited(self, path: str, current_sha256: Callable[[], str | None]) -> bool:
        """A file the window no longer holds changed or went: facts citing it at another
        version may be out of date. `current_sha256` is asked only when a fact cites it."""
        if path not in self._cited:
            return False
        digest = current_sha256()
        if all(d == digest for f in self._ledger for src, d in f.sources if src == path):
            return False  # the cited bytes are still what is on disk
        before = self.ledger_demotions
        self._demote(path)
        return self.ledger_demotions > before

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

    def bound_manifest(self, max_chars: int | None = None) -> int:
        """At most MANIFEST_MAX_FILES entries and, with `max_chars`, at most that many
        characters of manifest lines: tier 1's order, the least recently set bare entry
        first, then held ones. Returns how many were evicted; O(1) each.

        The frozen block keeps showing an evicted entry until the next freeze (the cached
        prefix changes only then); the budget stops counting it for that freeze at once."""
        files, evicted = self._files, 0
        while len(files) > C.MANIFEST_MAX_FILES or (
            max_chars is not None and files.manifest_chars > max_chars
        ):
            path = files.oldest_bare() or files.oldest_held()
            if path is None:
                break
            self.evict(path)
            evicted += 1
        return evicted

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
        self.history = _kept_by_freeze(self._history)
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

    def append_qa(self, question: str, answer: str) -> None:
        self._history.extend(
            [Turn("user", "question", question), Turn("assistant", "answer", answer)]
        )


def _kept_by_freeze(history: Iterable[Turn]) -> list[Turn]:
    """The history without its observation deltas and acks, and without the retrieval deltas
    whose question is gone (folded by a compaction, or not asked yet): a retrieval delta is
    kept when the next kept turn is its question. One pass from the end."""
    kept: list[Turn] = []
    for turn in reversed(list(history)):
        if turn.kind in ("observation", "ack"):
            continue
        if turn.kind == RETRIEVAL_KIND and (not kept or kept[-1].kind != "question"):
            continue
        kept.append(turn)
    kept.reverse()
    return kept
