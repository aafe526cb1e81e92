"""WorkspaceState's wipes, ticks, passivation, shutdown drain and keep-warm rule.

The lifecycle half of the state machine, between its fields (durability.py) and its
question flow (state.py): events from the clock and the operator rather than from askers.
"""

from __future__ import annotations

from live_memory.errors import ShuttingDown
from live_memory.memory import Window
from live_memory.prompt_cache import ping_due
from live_memory.workspace.durability import AwaitedWrite, Durability
from live_memory.workspace.effects import (
    DeleteSnapshot,
    Drained,
    Effect,
    Fail,
    Forward,
    WantPassivation,
)

__all__ = ["Lifecycle"]


class Lifecycle(Durability):
    """Wipes, time, passivation and shutdown; no threads, no I/O."""

    __slots__ = ()

    def wipe(self, now: float) -> list[Effect]:
        """Forget everything; forks taken before now never land (the commit rule)."""
        self.window = Window(root=self.root)
        self.version += 1
        self.wiped_at_version = self.version
        self.current_score = (0, 0)
        self.tree_built = False
        self._wipe_fresh()
        self.notify_log.trim(None)
        self.saved = self.generation
        self.dirty_since = None
        self.last_activity = now
        return [DeleteSnapshot()]

    def idle(self) -> bool:
        return not (self.in_flight or self.pending or self.pinging or self.distilling is not None)

    def tick(self, now: float, idle_after_s: float) -> list[Effect]:
        """Periodic: write a debounced (or previously refused) snapshot; offer passivation
        once idle — unless a snapshot is owed and the disk refuses it (memory is all we
        have then)."""
        effects: list[Effect] = []
        since = self.dirty_since
        due = since is not None and now - since >= self.limits.manifest_debounce_s
        if self.dirty and (due or self.degraded is not None):
            effects.append(self._persist())
        owed = self.dirty and self.degraded is not None
        if self.idle() and not owed and now - self.last_activity >= idle_after_s:
            effects.append(WantPassivation())
        return effects

    def passivate(self, flush: bool) -> list[Effect]:
        """Hand waiting questions to the next incarnation; persist unless the state is
        suspect (a supervisor restart: the snapshot wins)."""
        effects: list[Effect] = [Forward(q) for q in self.pending]
        self.pending.clear()
        if flush and self.dirty:
            effects.insert(0, self._persist())
        return effects

    def drain(self, slot: int) -> list[Effect]:
        """Shutdown: admit nothing new; once no fork is in flight, persist and report."""
        self.closing = True
        self.drains.append(slot)
        return self._finish_drain() if not self.in_flight else []

    def _finish_drain(self) -> list[Effect]:
        effects: list[Effect] = [
            Fail(q.slot, ShuttingDown("the server is shutting down")) for q in self.pending
        ]
        self.pending.clear()
        drains, self.drains = self.drains, []
        if self.dirty:
            effects.append(self._persist(AwaitedWrite(drains=drains)))
        else:
            effects += [Drained(slot) for slot in drains]
        return effects

    def keep_warm_due(self, now: float, max_idle_s: float, interval_s: float) -> bool:
        """The design's ping rule: a non-empty window, nothing in flight, queried within
        max-idle, untouched for the interval."""
        return not (
            self.pinging or self.in_flight or self.pending or not self.window.history
        ) and ping_due(
            now=now,
            last_question_at=self.last_question_at,
            last_touch=self.last_touch,
            interval_s=interval_s,
            max_idle_s=max_idle_s,
        )
