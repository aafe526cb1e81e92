"""WorkspaceActor: serially owns one workspace's window, version, queue and snapshot.

It never waits on the network: questions run in ForkActors on private copies of the window
and come back as Commit messages, adopted under the optimistic version rule.
"""

from __future__ import annotations

import itertools
import logging
import time
from collections import deque
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from live_memory.actors import background, questions
from live_memory.actors.message import (
    Ask,
    Cancel,
    Clear,
    Commit,
    DescribeMemory,
    Drain,
    DrainTranscripts,
    ExportLedger,
    FileEvent,
    ForkFailed,
    GetStats,
    IdleCheck,
    ImportFacts,
    KeepWarmTick,
    Notify,
    NotifyOutcome,
    Passivate,
    Passivated,
    PingDone,
    RequestPassivation,
    Reset,
    RestartWorkspace,
    Revalidate,
    Route,
    UpdateServices,
)
from live_memory.actors.runtime import Actor, ActorRef, ActorSystem
from live_memory.actors.workspace_stats import WorkspaceCounters, workspace_stats
from live_memory.agent.compactor import tree_chars
from live_memory.agent.services import Services
from live_memory.config import constants as C
from live_memory.errors import (
    ShuttingDown,
    SnapshotError,
)
from live_memory.memory.compaction import DistillGate
from live_memory.memory.ingest import Ingestor, held_bytes_cap
from live_memory.memory.model import LedgerFact
from live_memory.memory.persist import window_from_state, window_to_state
from live_memory.memory.preload import preload
from live_memory.memory.snapshot_store import SnapshotStore
from live_memory.memory.window import Window
from live_memory.prompt_cache import CacheDecision
from live_memory.providers.types import CacheTtl
from live_memory.tools import Toolbox, build_directory_tree, current_sha256
from live_memory.watchers.revalidate import revalidation_events

__all__ = ["WorkspaceActor"]

logger = logging.getLogger(__name__)


_REQUESTS = (
    Ask,
    Notify,
    GetStats,
    Reset,
    Clear,
    ExportLedger,
    ImportFacts,
    DescribeMemory,
    DrainTranscripts,
)


class WorkspaceActor(Actor):
    kind = "workspace"

    def __init__(
        self,
        system: ActorSystem,
        root: str,
        *,
        gateway: ActorRef[Any],
        services: Services,
        store: SnapshotStore,
        failures: int = 0,
        last_error: str | None = None,
    ) -> None:
        super().__init__(system, root, root)
        self.info.failures, self.info.last_error = failures, last_error
        self.root = root
        self.path = Path(root)
        self.gateway = gateway
        self.services = services
        self.store = store
        self._configure(services)
        self.window = Window(root=root)
        self.version = 0
        self.wiped_at_version = 0
        self.current_score = (0, 0)
        self.seq = 0
        self.notify_log: deque[tuple[int, FileEvent | tuple[LedgerFact, ...]]] = deque()
        """What changed the window while forks ran, replayed onto an adopted fork window."""
        self.pending: deque[Ask] = deque()
        self.in_flight: dict[int, questions.Slot] = {}
        self.fork_ids = itertools.count(1)
        self.counters = WorkspaceCounters()
        self.gate = DistillGate()
        self.last_activity = time.monotonic()
        self.draining: list[Future[None]] = []
        self.closing = False
        self.passivating = False
        self.dirty = False
        self.last_question_at: float | None = None
        self.last_touch = time.monotonic()
        self.pinging = False
        self.ping_ttl: CacheTtl | None = None
        self.cache_decision: CacheDecision | None = None
        """The last prompt-cache decision (reported by /stats)."""
        self.distilling: int | None = None
        self.tree_built = False
        self.tree_stale = False
        """The watcher saw HEAD move or many files come and go: rebuild at the next freeze."""

    def _configure(self, services: Services) -> None:
        self.services = services
        settings = services.settings
        self.toolbox = Toolbox(
            self.path,
            secret_patterns=settings.secret_path_patterns,
            file_globs=settings.file_globs,
        )
        self.ingestor = Ingestor(
            self.path,
            file_globs=settings.file_globs,
            passive_ingestion=settings.passive_ingestion,
            secret_patterns=settings.secret_path_patterns,
            max_held_bytes=held_bytes_cap(
                settings.max_held_bytes, services.max_context_tokens, settings.compaction_floor
            ),
        )

    # --- lifecycle -----------------------------------------------------------------------
    def started(self) -> None:
        body = self.store.load(self.path)
        if body is not None:
            try:
                self.window = window_from_state(
                    self.root,
                    body,
                    lambda p: current_sha256(
                        self.path, p, secret_patterns=self.services.settings.secret_path_patterns
                    ),
                )
                counters = body.get("counters", {})
                self.counters = WorkspaceCounters.from_state(
                    counters if isinstance(counters, dict) else {}
                )
                self.version = int(str(body.get("version", 0)))
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                logger.warning("snapshot of %s is malformed (%s); starting empty", self.root, exc)
                self.store.quarantine(self.path, repr(exc))
                self.window = Window(root=self.root)
        self._load_workspace()

    def _load_workspace(self) -> None:
        """Preload globs and the directory tree, then freeze the prompt's volatile block."""
        settings = self.services.settings
        floor_chars = int(
            self.services.max_context_tokens
            * settings.compaction_floor
            * self.window.chars_per_token
        )
        preload(
            self.window,
            self.path,
            settings.preload_globs,
            total_cap_bytes=min(C.PRELOAD_MAX_TOTAL_BYTES, floor_chars // 2),
            secret_patterns=settings.secret_path_patterns,
        )
        self.window.freeze()
        background.drain_transcripts(self)

    def _ensure_tree(self) -> None:
        """The directory tree is built when the first question needs it, not at activation:
        walking a huge root must not hold up notifications, stats or wipes."""
        rebuild = self.tree_stale and not self.in_flight  # a fork carries the old tree
        if not self.tree_built or rebuild:
            self.window.tree = build_directory_tree(self.path, tree_chars(self.services))
            self.tree_stale = False
            if self.tree_built:
                # A new tree changes the stable prefix: only together with a new freeze.
                self.window.freeze()
            self.tree_built = True

    def stopped(self) -> None:
        for slot in self.in_flight.values():
            slot.ref.tell(Cancel("workspace stopped"))
            if not slot.ask.reply.done():
                slot.ask.reply.set_exception(ShuttingDown("the workspace was stopped"))
        self._flush()

    def _flush(self) -> None:
        if not self.dirty:
            return
        state = window_to_state(self.window) | {
            "counters": self.counters.to_state(),
            "version": self.version,
        }
        try:
            self.store.save(self.path, state)
            self.dirty = False
        except SnapshotError:
            logger.exception("snapshot of %s not written; memory state kept", self.root)

    # --- dispatch ------------------------------------------------------------------------
    def handle(self, message: Any) -> None:
        if not isinstance(message, IdleCheck | KeepWarmTick | PingDone):
            self.last_activity = time.monotonic()
        if self.passivating and isinstance(message, _REQUESTS):
            # Sent on a handle to this incarnation; the gateway buffers it for the next one.
            self.gateway.tell(Route(self.root, message))
            return
        if background.background_message(self, message):
            return
        match message:
            case Ask():
                questions.ask(self, message)
            case Commit():
                questions.commit(self, message)
            case ForkFailed():
                questions.fork_failed(self, message)
            case Notify():
                outcome = self._notify(message.events)
                if message.reply is not None:
                    message.reply.set_result(outcome)
            case Revalidate():
                self._revalidate(message)
            case GetStats():
                message.reply.set_result(self.stats())
            case Reset() | Clear():
                self._wipe(reload=isinstance(message, Reset))
                message.reply.set_result(self.stats())
            case IdleCheck():
                self._idle_check(message.idle_after_s)
            case DrainTranscripts():
                background.drain_transcripts(self)
            case Passivate():
                self._passivate(message.flush)
            case UpdateServices():
                self._configure(message.services)
            case Drain():
                self.closing = True
                self.draining.append(message.reply)
                self._maybe_drained()
            case _:
                super().handle(message)

    def stats(self) -> dict[str, object]:
        return workspace_stats(self)

    # --- notifications -------------------------------------------------------------------
    def _notify(self, events: tuple[FileEvent, ...]) -> NotifyOutcome:
        accepted = 0
        for event in events:
            if self.ingestor.apply(self.window, event.path, event.kind, event.content):
                accepted += 1
            if self.in_flight:
                self.seq += 1
                self.notify_log.append((self.seq, event))
        return NotifyOutcome(accepted, len(events) - accepted)

    def _revalidate(self, message: Revalidate) -> None:
        """The watcher could not route a storm path by path (or polls this root): re-check
        only the files the window holds."""
        if message.files:
            checks = revalidation_events(self.path, self.window.files)
            self._notify(tuple(FileEvent(p, kind) for p, kind in checks))
        if message.tree_stale and self.tree_built:
            self.tree_stale = True

    def _trim_notify_log(self) -> None:
        if not self.in_flight:
            self.notify_log.clear()

    # --- wipes, idleness, shutdown -------------------------------------------------------
    def _wipe(self, *, reload: bool) -> None:
        self.window = Window(root=self.root)
        self.version += 1
        self.wiped_at_version = self.version
        self.current_score = (0, 0)
        self.store.delete(self.path)
        self.dirty = False
        self.tree_built = False
        if reload:
            self._load_workspace()

    def _idle(self) -> bool:
        return not self.in_flight and not self.pending

    def _idle_check(self, idle_after_s: float) -> None:
        if self.dirty:  # a snapshot write that failed (full disk) is retried on every sweep
            self._flush()
        if self._idle() and time.monotonic() - self.last_activity >= idle_after_s:
            self.gateway.tell(RequestPassivation(self.root))

    def _passivate(self, flush: bool) -> None:
        self.passivating = True
        if flush:
            self._flush()
        for ask in self.pending:  # the next incarnation answers them
            self.gateway.tell(Route(self.root, ask))
        self.pending.clear()
        self.gateway.tell(Passivated(self.root))
        self.stop()

    def failed(self, error: Exception) -> None:
        if not self.passivating:
            self.passivating = True
            self.gateway.tell(
                RestartWorkspace(self.root, self.info.failures, self.info.last_error or "")
            )

    def _maybe_drained(self) -> None:
        if self.draining and not self.in_flight:
            for ask in self.pending:
                ask.reply.set_exception(ShuttingDown("the server is shutting down"))
            self.pending.clear()
            self._flush()
            for reply in self.draining:
                if not reply.done():
                    reply.set_result(None)
            self.draining.clear()
