"""WorkspaceActor: the thin shell around one WorkspaceState.

It turns messages into the state's events and carries out the effects they return: forks,
replies, snapshot writes, spend. It never waits on the network: questions run as Forks on
the I/O loop, on private copies of the window, and come back as Commit messages.
"""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

from live_memory.actors import background
from live_memory.actors.inspection import InspectWorkspace, inspect_workspace
from live_memory.actors.message import (
    AdoptFork,
    Ask,
    Clear,
    Commit,
    Drain,
    DrainTranscripts,
    ForkFailed,
    GetStats,
    IdleCheck,
    Notify,
    Passivate,
    Passivated,
    RequestPassivation,
    Reset,
    RestartWorkspace,
    Revalidate,
    Route,
    SlotCancelled,
    UpdateServices,
)
from live_memory.actors.passivation import PassivateIfIdle, StaysActive
from live_memory.actors.rereader import RereadDone
from live_memory.actors.runtime import Actor, ActorDeadError, ActorRef, ActorSystem, resolve
from live_memory.actors.symbol_shell import TeedMemo, index_events, index_paths, release_index
from live_memory.actors.workspace_effects import EffectRunner
from live_memory.actors.workspace_stats import workspace_stats
from live_memory.agent import QuestionProgress, Services
from live_memory.errors import BudgetExhausted, LiveMemoryError, ShuttingDown
from live_memory.memory import Snapshots
from live_memory.prompt_cache import CacheDecision
from live_memory.providers import CacheTtl
from live_memory.watchers import revalidation_events
from live_memory.workspace import FileEvent, Question, WantPassivation

__all__ = ["WorkspaceActor"]

logger = logging.getLogger(__name__)
T = TypeVar("T")

_REQUESTS = (Ask, Notify, GetStats, Reset, Clear, DrainTranscripts, AdoptFork, InspectWorkspace)
_FROM_FORKS = (Commit, ForkFailed)


class WorkspaceActor(Actor, EffectRunner):
    kind = "workspace"

    def __init__(
        self,
        system: ActorSystem,
        root: str,
        *,
        gateway: ActorRef[Any],
        services: Services,
        store: Snapshots,
        failures: int = 0,
        last_error: str | None = None,
    ) -> None:
        super().__init__(system, root, root)
        self.info.failures, self.info.last_error = failures, last_error
        self.started_at = self.info.started_at
        self.root, self.path = root, Path(root)
        self.gateway, self.store = gateway, store
        self.slots: dict[int, Future[Any]] = {}
        self.boards: dict[int, QuestionProgress] = {}
        """Progress boards of the slots whose askers passed one (popped with the slot)."""
        self.slot_ids = itertools.count(1)
        self.passivating = False
        self.broken = False
        self.load_error: LiveMemoryError | OSError | None = None
        """Why this incarnation could not load (a full disk): every request gets it."""
        self.ping_ttl: CacheTtl | None = None
        self.cache_decision: CacheDecision | None = None
        """The last prompt-cache decision (reported by /stats)."""
        self.teed = TeedMemo(root)
        self._configure(services)
        self.state = self.new_state()

    # --- lifecycle -----------------------------------------------------------------------
    def started(self) -> None:
        try:
            self.restore()
            self.load_workspace()
        except (LiveMemoryError, OSError) as exc:
            # An actor whose start raised is stopped with its mailbox unanswered: the
            # question that activated it waited for the edge's timeout. Answer each request
            # with why, and step aside (broken: its empty state never replaces the snapshot).
            logger.error("workspace %s cannot be loaded: %s", self.root, exc)
            self.load_error, self.broken = exc, True
            self.info.failures += 1
            self.info.last_error = f"{type(exc).__name__}: {exc}"
            self.gateway.tell(RequestPassivation(self.root))

    def stopped(self) -> None:
        for slot in list(self.slots):
            self.deliver(slot, error=ShuttingDown("the workspace was stopped"))
        for flight_id in list(self.state.in_flight):
            self.cancel_fork(flight_id, "workspace stopped")
        release_index(self.services, self.symbols)

    # --- reply slots ---------------------------------------------------------------------
    def slot(self, reply: Future[Any]) -> int:
        """A plain id for `reply` (what the state's effects name); its cancellation comes
        back as a message, so the state learns the asker went away."""
        slot = next(self.slot_ids)
        self.slots[slot] = reply
        ref = self.actor_ref

        def gone(f: Future[Any]) -> None:
            if f.cancelled():
                try:
                    ref.tell(SlotCancelled(slot))
                except ActorDeadError:
                    logger.debug("asker of a stopped workspace went away")

        reply.add_done_callback(gone)
        return slot

    def deliver(self, slot: int, value: Any = None, *, error: BaseException | None = None) -> None:
        """Resolve a reply slot; one whose asker went away is silently skipped."""
        reply = self.slots.pop(slot, None)
        self.boards.pop(slot, None)
        if reply is not None:
            resolve(reply, value, error=error)

    # --- dispatch ------------------------------------------------------------------------
    def handle(self, message: Any) -> None:
        if self.load_error is not None and not isinstance(message, Passivate):
            reply = getattr(message, "reply", None)
            if isinstance(reply, Future):
                resolve(reply, error=self.load_error)
            return
        if self.passivating and isinstance(message, _REQUESTS + _FROM_FORKS):
            # Sent on a handle to this incarnation; the gateway buffers it for the next one.
            self.gateway.tell(Route(self.root, message))
            return
        if background.background_message(self, message):
            return
        if isinstance(message, InspectWorkspace):  # not a use: activity is not bumped
            inspect_workspace(self, message)
            return
        now = time.monotonic()
        state = self.state
        match message:
            case Ask():
                self._ask(message, now)
            case Commit():
                self.forks.pop(message.fork_id, None)
                reads = getattr(getattr(message.result, "loop", None), "reads", ())
                index_paths(self.services, self.symbols, (r.path for r in reads), self.teed)
                self.event(
                    lambda: state.fork_done(
                        message.fork_id, message.window, message.result, now, message.cache_ttl
                    )
                )
            case ForkFailed():
                self.forks.pop(message.fork_id, None)
                self.event(lambda: state.fork_failed(message.fork_id, message.error))
            case SlotCancelled():
                self.event(lambda: state.cancelled(message.slot))
            case AdoptFork():
                slot = self.slot(message.reply)
                self.call(lambda: state.adopt(message.fork_id, slot, message.base_version))
            case Notify():
                outcome = self.call(lambda: state.notify(message.events, now))
                index_events(self.services, self.symbols, message.events, self.teed)
                if message.reply is not None:
                    resolve(message.reply, outcome)
                self.event(lambda: state.rereads_due(now))  # after the reply: never waited on
            case RereadDone():
                self.event(lambda: state.reread_done(message.results, now))
            case Revalidate():
                self._revalidate(message, now)
            case GetStats():
                resolve(message.reply, self.stats())
            case Reset() | Clear():
                self.event(lambda: state.wipe(now))
                if isinstance(message, Reset):
                    self.load_workspace()
                else:  # `empty` leaves nothing of the workspace on disk (20-33 MB indexes)
                    self.drop_index()
                resolve(message.reply, self.stats())
            case IdleCheck():
                self.event(lambda: state.tick(now, message.idle_after_s))
            case PassivateIfIdle():  # the sweep's rule, whatever the idle time (the cap)
                effects = self.call(lambda: state.tick(now, 0.0))
                self.run(effects)
                if WantPassivation() not in effects:
                    self.gateway.tell(StaysActive(self.root))
            case DrainTranscripts():
                background.drain_transcripts(self)
            case Passivate():
                self._passivate(message.flush)
            case UpdateServices():
                self._configure(message.services)
            case Drain():
                self.event(lambda: state.drain(self.slot(message.reply)))
            case _:
                super().handle(message)

    def _ask(self, ask: Ask, now: float) -> None:
        try:
            self.services.spend.check(self.root)
        except BudgetExhausted as exc:
            resolve(ask.reply, error=exc)
            return
        self.ensure_tree()
        slot = self.slot(ask.reply)
        if ask.progress is not None:
            self.boards[slot] = ask.progress
        question = Question(slot, ask.question, ask.max_answer_tokens, ask.soft_deadline)
        self.event(lambda: self.state.ask(question, now))

    def _revalidate(self, message: Revalidate, now: float) -> None:
        """The watcher could not route a storm path by path (or polls this root): re-check
        only the files the window holds."""
        state = self.state
        if message.files:
            checks = revalidation_events(self.path, state.window.files)
            events = tuple(FileEvent(p, kind) for p, kind in checks)
            self.call(lambda: state.notify(events, now))
            self.event(lambda: state.rereads_due(now))
        if message.tree_stale and state.tree_built:
            state.tree_stale = True
        symbols = self.services.stores.symbols
        rescan = message.tree_stale or message.watches_placed
        if rescan and self.symbols is not None and symbols is not None:
            self.teed.forget()  # the pass re-reads files from disk
            symbols.recheck(self.symbols)

    def call(self, event: Callable[[], T]) -> T:
        """Run a state event; if it raises, the state may be half-changed: it is broken,
        and the supervisor replaces this incarnation (from the snapshot)."""
        try:
            return event()
        except Exception:
            self.broken = True
            raise

    def event(self, event: Callable[[], Sequence[Any]]) -> None:
        self.run(self.call(event))

    def stats(self) -> dict[str, object]:
        return workspace_stats(self)

    # --- passivation and supervision -----------------------------------------------------
    def _passivate(self, flush: bool) -> None:
        try:  # waiting questions go to the next incarnation even from a broken state
            self.run(self.state.passivate(flush and not self.broken))
        except Exception:  # stopped() fails what could not be handed over
            logger.exception("workspace %s could not hand over its queue", self.root)
        if not flush:  # a restart: the next incarnation adopts the forks still running
            for fork_id, flight in self.state.in_flight.items():
                reply = self.slots.pop(flight.slot, None)
                self.boards.pop(flight.slot, None)  # the running fork keeps its own
                if reply is not None:
                    adopt = AdoptFork(fork_id, flight.base_version, reply)
                    self.gateway.tell(Route(self.root, adopt))
            self.state.in_flight.clear()
        self.passivating = True
        self.gateway.tell(Passivated(self.root))
        self.stop()

    def failed(self, error: Exception) -> None:
        """A handler raised: its caller already has the error and /actors shows it. Only a
        broken state is worth a restart; anything else leaves the workspace serving."""
        if self.broken and not self.passivating:
            self.passivating = True
            self.gateway.tell(
                RestartWorkspace(self.root, self.info.failures, self.info.last_error or "")
            )
