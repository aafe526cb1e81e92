"""WorkspaceState's fields and the bookkeeping that makes them durable.

The base of the state machine (state.py adds the question flow, lifecycle.py the wipes,
ticks, passivation and drains): every field, and the two-phase persist tickets. A change worth
keeping bumps `generation`; `_persist` hands the shell a `Persist` with a ticket that
remembers the generation and the answers waiting for that write, and `saved` is the last
generation written, so `dirty` is one comparison.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from live_memory.config import constants as C
from live_memory.memory import (
    DistillGate,
    Fitted,
    Ingestor,
    Watermarks,
    Window,
    fit_window,
    window_to_state,
)
from live_memory.workspace.counters import WorkspaceCounters
from live_memory.workspace.effects import Account, Persist
from live_memory.workspace.freshness import FreshnessEvents
from live_memory.workspace.notify_log import NotifyLog
from live_memory.workspace.records import Answer, Question

__all__ = ["AwaitedWrite", "Durability", "HeldAnswer", "InFlight", "Limits"]


@dataclass(frozen=True, slots=True)
class Limits:
    concurrency: int
    max_pending: int
    max_context_tokens: int
    refreeze_delta_share: float
    """Once observation deltas pass this share of the window, the next question re-freezes."""
    manifest_debounce_s: float
    notify_log_max_bytes: int
    max_ledger_facts: int = C.MAX_LEDGER_FACTS
    compaction_threshold: float = C.DEFAULT_COMPACTION_THRESHOLD
    compaction_floor: float = C.DEFAULT_COMPACTION_FLOOR

    @property
    def manifest_max_chars(self) -> int:
        """The manifest's cap (MANIFEST_MAX_SHARE of the window, nominal chars per token so
        it does not drift with calibration)."""
        return int(self.max_context_tokens * C.MANIFEST_MAX_SHARE * C.CHARS_PER_TOKEN)

    @property
    def watermarks(self) -> Watermarks:
        return Watermarks(self.max_context_tokens, self.compaction_threshold, self.compaction_floor)


@dataclass(frozen=True, slots=True)
class InFlight:
    slot: int
    base_version: int
    base_seq: int
    question: str = ""


@dataclass(frozen=True, slots=True)
class HeldAnswer:
    """An answer waiting for its snapshot to be written."""

    slot: int
    answer: Answer
    account: Account
    compacted: bool


@dataclass(slots=True)
class AwaitedWrite:
    acks: list[HeldAnswer] = field(default_factory=list)
    drains: list[int] = field(default_factory=list)
    generation: int = 0


class Durability(FreshnessEvents):
    """The fields of `WorkspaceState` (its base) and its persist tickets."""

    # Slotted: one per active workspace, and 31 fields are past what an instance dict shares
    # its keys for (a 1.6 KB dict each; bench/workspaces_at_scale.py).
    __slots__ = (
        "awaiting",
        "closing",
        "counters",
        "current_score",
        "degraded",
        "dirty_since",
        "distilling",
        "drains",
        "fork_ids",
        "gate",
        "generation",
        "in_flight",
        "ingestor",
        "last_activity",
        "last_question_at",
        "last_touch",
        "limits",
        "notify_log",
        "pending",
        "pinging",
        "refreezes",
        "root",
        "saved",
        "tickets",
        "tree_built",
        "tree_stale",
        "version",
        "window",
        "wiped_at_version",
    )

    def __init__(self, root: str, ingestor: Ingestor, limits: Limits, now: float) -> None:
        self.root = root
        self.ingestor = ingestor
        self.limits = limits
        self.window = Window(root=root)
        self.version = 0
        self.wiped_at_version = 0
        self.current_score = (0, 0)
        self.notify_log = NotifyLog(limits.notify_log_max_bytes)
        self.pending: list[Question] = []
        """Waiting questions, oldest first (at most max_pending: a list, as a deque holds a
        64-slot block per workspace from the start)."""
        self.in_flight: dict[int, InFlight] = {}
        self.counters = WorkspaceCounters()
        self.gate = DistillGate()
        self.fork_ids = itertools.count(1)
        self.tickets = itertools.count(1)
        self.closing = False
        self.drains: list[int] = []
        self.generation = 0
        """Bumped on every change worth persisting; `saved` is the last one written."""
        self.saved = 0
        self.dirty_since: float | None = None
        self.degraded: str | None = None
        """Why the last snapshot write failed (None once one succeeds)."""
        self.awaiting: dict[int, AwaitedWrite] = {}
        self.last_activity = now
        self.last_question_at: float | None = None
        self.last_touch = now
        self.pinging = False
        self.distilling: int | None = None
        self.tree_built = False
        self.tree_stale = False
        """The watcher saw HEAD move or many files come and go: rebuild at the next freeze."""
        self.refreezes = 0
        self._init_freshness()

    @property
    def _forks_running(self) -> bool:
        return bool(self.in_flight)

    # --- restore ---------------------------------------------------------------------
    def restore(self, window: Window, counters: WorkspaceCounters, version: int) -> Fitted:
        """Take up a snapshot's window, fitted to the current limits before anything is sent:
        one saved under a larger window (or tampered with) is brought to the floor without
        a model call (`fit_window`), its manifest within its cap. Returns what was cut."""
        self.window, self.counters, self.version = window, counters, version
        window.bound_manifest(self.limits.manifest_max_chars)
        return fit_window(window, self.limits.watermarks)

    @property
    def dirty(self) -> bool:
        return self.generation > self.saved

    def snapshot(self) -> dict[str, object]:
        return (
            window_to_state(self.window)
            | {"counters": self.counters.to_state(), "version": self.version}
            | self._fresh_state()
        )

    def _changed(self, now: float) -> None:
        self.generation += 1
        if self.dirty_since is None:
            self.dirty_since = now

    def _persist(self, pending: AwaitedWrite | None = None) -> Persist:
        ticket = next(self.tickets)
        entry = pending or AwaitedWrite()
        entry.generation = self.generation
        self.awaiting[ticket] = entry
        return Persist(ticket, self.snapshot())
