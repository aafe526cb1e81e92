"""Window B: the Live Memory's own conversation state for one workspace.

A plain object, owned serially by a workspace actor (forks work on a `copy()`). Between
compactions it only grows at the end: the frozen volatile block is rendered once by `freeze()`
and every later change reaches the model as an observation delta appended by `sync_deltas()`.
"""

from __future__ import annotations

import copy as _copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

from live_memory.config import constants as C
from live_memory.memory.ledger import demote_facts, merge_facts, render_ledger
from live_memory.memory.model import QA_KINDS, FileContext, FileSource, LedgerFact, Turn

__all__ = ["PendingChange", "Window"]

PendingChange = Literal["content", "stale", "deleted"]

_ACK = "Noted."
_PRELOAD_HEADING = "## Reference documents (configured preload, verbatim)"
_OBSERVED_HEADING = "## Files the coding agent recently read or wrote (current content)"
_MANIFEST_HEADING = "## Files you have seen (re-read with Read when you need their content)"
_STATE_NOTE = {
    "current": "",
    "stale": " — CHANGED since you read it; re-read before relying on it",
    "deleted": " — DELETED or moved/renamed; it no longer exists at this path",
}


def _file_block(ctx: FileContext) -> str:
    return f"### {ctx.path} ({ctx.size} bytes, sha256 {ctx.sha256[:12]})\n```\n{ctx.content}\n```"


@dataclass(slots=True)
class Window:
    """Everything one workspace remembers. Mutated only by its owner."""

    root: str
    files: dict[str, FileContext] = field(default_factory=dict)
    history: list[Turn] = field(default_factory=list)
    ledger: list[LedgerFact] = field(default_factory=list)
    tree: str = ""
    frozen: str | None = None
    pending: dict[str, PendingChange] = field(default_factory=dict)
    ledger_demotions: int = 0
    learned: list[LedgerFact] = field(default_factory=list)
    """Facts added since the last freeze, not yet told to the model (a delta carries them)."""
    recently_modified: list[str] = field(default_factory=list)
    clock: int = 0
    chars_per_token: float = C.CHARS_PER_TOKEN
    compactions: int = 0
    last_compaction_at: float | None = None
    summaries_written: int = 0

    # --- copying -------------------------------------------------------------------------
    def copy(self) -> Window:
        """An independent copy for a fork; records are immutable, so containers suffice."""
        clone = _copy.copy(self)
        clone.files = dict(self.files)
        clone.history = list(self.history)
        clone.ledger = list(self.ledger)
        clone.pending = dict(self.pending)
        clone.recently_modified = list(self.recently_modified)
        clone.learned = list(self.learned)
        return clone

    def _tick(self) -> int:
        self.clock += 1
        return self.clock

    # --- learning ------------------------------------------------------------------------
    def observe(
        self, path: str, content: str, sha256: str, size: int, *, source: FileSource = "observed"
    ) -> bool:
        """Hold a file's current content (a teed read/write or a preload). True if new bytes."""
        old = self.files.get(path)
        if old and old.sha256 == sha256 and old.content is not None and old.state == "current":
            self.files[path] = replace(old, last_used=self._tick())
            return False
        if old and old.source == "observed" and source == "preloaded":
            source = "observed"  # a live tee supersedes the preload flag
        self.files[path] = FileContext(
            path, sha256, size, source, "current", content, last_used=self._tick()
        )
        self.pending[path] = "content"
        if path in self.recently_modified:
            self.recently_modified.remove(path)
        return True

    def record_read(self, path: str, sha256: str, size: int) -> None:
        """The model read a file through its tools: remember it in the manifest."""
        old = self.files.get(path)
        if old and old.sha256 == sha256 and old.state == "current":
            self.files[path] = replace(old, last_used=self._tick())
            return
        keep = old.content if old and old.sha256 == sha256 else None
        source: FileSource = old.source if old and keep is not None else "read"
        self.files[path] = FileContext(path, sha256, size, source, "current", keep, self._tick())
        changed = old is not None and old.sha256 != sha256
        if changed:
            # The file moved on unannounced: facts citing it are as outdated as its old bytes.
            self.ledger, demoted = demote_facts(self.ledger, path)
            self.ledger_demotions += demoted
        if old and (old.state != "current" or changed):
            # The frozen block (or an earlier delta) may still show the old bytes as current.
            self.pending[path] = "content" if keep is not None else "stale"

    def mark_stale(self, path: str) -> bool:
        """A known file changed on disk. True if the window knew it."""
        return self._mark(path, "stale")

    def mark_deleted(self, path: str) -> bool:
        """A known file disappeared. True if the window knew it."""
        return self._mark(path, "deleted")

    def _mark(self, path: str, state: Literal["stale", "deleted"]) -> bool:
        old = self.files.get(path)
        if old is None:
            return False
        if old.state != state:
            self.files[path] = replace(old, state=state, content=None)
            self.pending[path] = state
        self.ledger, demoted = demote_facts(self.ledger, path)
        self.ledger_demotions += demoted
        return True

    def note_modified(self, path: str) -> bool:
        """An edit without content: hint it on the next question if the window knows the file."""
        if path not in self.files or path in self.recently_modified:
            return False
        self.recently_modified.append(path)
        del self.recently_modified[: -C.RECENTLY_MODIFIED_HINT_MAX]
        return True

    def drain_recently_modified(self) -> list[str]:
        hints, self.recently_modified = self.recently_modified, []
        return hints

    # --- the prompt's frozen block and its deltas ---------------------------------------
    def freeze(self) -> None:
        """Render the volatile block anew (only at load and compaction) and drop the deltas."""
        preloaded = [f for f in self.files.values() if f.content and f.source == "preloaded"]
        observed = sorted(
            (f for f in self.files.values() if f.content and f.source != "preloaded"),
            key=lambda f: f.path,
        )
        parts = [render_ledger(self.ledger)]
        if preloaded:
            parts += ["", _PRELOAD_HEADING, *(_file_block(f) for f in preloaded)]
        if observed:
            parts += ["", _OBSERVED_HEADING, *(_file_block(f) for f in observed)]
        parts += ["", _MANIFEST_HEADING, self._manifest()]
        self.frozen = "\n".join(parts)
        self.history = [t for t in self.history if t.kind not in ("observation", "ack")]
        self.pending.clear()
        self.ledger_demotions = 0
        self.learned.clear()

    def learn(self, facts: Iterable[LedgerFact]) -> int:
        """Merge facts learnt outside a compaction (transcripts, imports); returns how many
        were new. They reach the model through the next observation delta."""
        merged = merge_facts(self.ledger, facts)
        added = merged[len(self.ledger) :]
        self.ledger = merged
        self.learned += added
        return len(added)

    def _manifest(self) -> str:
        if not self.files:
            return "(none yet)"
        return "\n".join(
            f"- {f.path}{_STATE_NOTE[f.state]}" for f in sorted(self.files.values(), key=_path)
        )

    def sync_deltas(self) -> bool:
        """Append pending changes as one observation message (plus ack). True if appended."""
        if self.frozen is None:
            self.freeze()
            return False
        if not self.pending and not self.ledger_demotions and not self.learned:
            return False
        content = [self.files[p] for p, k in sorted(self.pending.items()) if k == "content"]
        notices = [
            f"- {p}{_STATE_NOTE[k]}" for p, k in sorted(self.pending.items()) if k != "content"
        ]
        parts = ["[observation] Changes in the workspace since you last looked:"]
        parts += [_file_block(f) for f in content if f.content is not None]
        if notices:
            parts += ["File status changes:", *notices]
        if self.learned:
            parts += ["New durable knowledge:", *(f"- {f.text}" for f in self.learned)]
        if self.ledger_demotions:
            parts.append(
                f"{self.ledger_demotions} accumulated fact(s) cite changed files; treat them as "
                "possibly out of date until re-verified."
            )
        self.history += [
            Turn("user", "observation", "\n".join(parts)),
            Turn("assistant", "ack", _ACK),
        ]
        self.pending.clear()
        self.ledger_demotions = 0
        self.learned.clear()
        return True

    def append_qa(self, question: str, answer: str) -> None:
        self.history += [Turn("user", "question", question), Turn("assistant", "answer", answer)]

    # --- measuring -----------------------------------------------------------------------
    def budget_chars(self) -> int:
        """Characters the budget counts: tree, ledger, file contexts and Q/A (not deltas)."""
        ledger = sum(len(f.text) + 3 for f in self.ledger)
        files = sum(
            (len(f.content) if f.content else 0) + len(f.path) + 16 for f in self.files.values()
        )
        turns = sum(len(t.text) for t in self.history if t.kind not in ("observation", "ack"))
        return len(self.tree) + ledger + files + turns

    def estimated_tokens(self) -> int:
        return int(self.budget_chars() / self.chars_per_token)

    def calibrate(self, estimated_chars: int, actual_tokens: int) -> None:
        """Fold one observed (chars sent, tokens billed) pair into the chars/token estimate."""
        if estimated_chars <= 0 or actual_tokens <= 0:
            return
        observed = min(max(estimated_chars / actual_tokens, C.CALIBRATION_MIN), C.CALIBRATION_MAX)
        alpha = C.CALIBRATION_EMA_ALPHA
        self.chars_per_token = (1 - alpha) * self.chars_per_token + alpha * observed

    @property
    def qa_turns(self) -> int:
        return sum(1 for t in self.history if t.kind in QA_KINDS)

    def counts(self) -> Mapping[str, int]:
        states = [f.state for f in self.files.values()]
        return {
            "loaded": len(self.files),
            "with_content": sum(1 for f in self.files.values() if f.content is not None),
            "stale": states.count("stale"),
            "deleted": states.count("deleted"),
        }

    def known_hashes(self) -> dict[str, str]:
        return {p: f.sha256 for p, f in self.files.items() if f.state == "current"}


def _path(ctx: FileContext) -> str:
    return ctx.path
