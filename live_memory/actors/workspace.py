"""WorkspaceActor: serially owns one workspace's window, version, queue and snapshot.

It never waits on the network: questions run in ForkActors on private copies of the window
and come back as Commit messages, adopted under the optimistic version rule.
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import time
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from live_memory.actors import background
from live_memory.actors.fork import ForkActor
from live_memory.actors.message import (
    Answer,
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
    Route,
    StartFork,
    UpdateServices,
)
from live_memory.actors.runtime import Actor, ActorRef, ActorSystem
from live_memory.actors.workspace_stats import WorkspaceCounters, prefix_tokens, workspace_stats
from live_memory.agent.compactor import tree_chars
from live_memory.agent.question import QuestionJob, QuestionOutcome
from live_memory.agent.services import Services
from live_memory.config import constants as C
from live_memory.errors import (
    BudgetExhausted,
    Busy,
    LiveMemoryError,
    ShuttingDown,
    SnapshotError,
)
from live_memory.memory.commit import decide_commit
from live_memory.memory.compaction import DistillGate
from live_memory.memory.ingest import Ingestor
from live_memory.memory.model import LedgerFact
from live_memory.memory.persist import window_from_state, window_to_state
from live_memory.memory.preload import preload
from live_memory.memory.snapshot_store import SnapshotStore
from live_memory.memory.window import Window
from live_memory.providers import cache_economics_for
from live_memory.providers.types import CacheTtl
from live_memory.tools import Toolbox, build_directory_tree, read_workspace_bytes

__all__ = ["WorkspaceActor"]

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class _Slot:
    ask: Ask
    ref: ActorRef[Any]
    base_version: int
    ttl: CacheTtl | None


def _digest(root: Path, rel: str, secret_patterns: Sequence[str]) -> str | None:
    """The file's sha256 now, or None when it is gone or unreadable (through the jail)."""
    try:
        _, read = read_workspace_bytes(
            root, rel, max_bytes=C.READ_MAX_FILE_BYTES, secret_patterns=secret_patterns
        )
    except (LiveMemoryError, OSError):
        return None
    return read.sha256


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
        self.economics = cache_economics_for(services.settings)
        self.window = Window(root=root)
        self.version = 0
        self.wiped_at_version = 0
        self.current_score = (0, 0)
        self.seq = 0
        self.notify_log: deque[tuple[int, FileEvent | tuple[LedgerFact, ...]]] = deque()
        """What changed the window while forks ran, replayed onto an adopted fork window."""
        self.pending: deque[Ask] = deque()
        self.in_flight: dict[int, _Slot] = {}
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
        self.distilling: int | None = None
        self.tree_built = False

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
        )

    # --- lifecycle -----------------------------------------------------------------------
    def started(self) -> None:
        body = self.store.load(self.path)
        if body is not None:
            try:
                self.window = window_from_state(
                    self.root,
                    body,
                    lambda p: _digest(self.path, p, self.services.settings.secret_path_patterns),
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
        if not self.tree_built:
            self.window.tree = build_directory_tree(
                self.path, tree_chars(self.window, self.services)
            )
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
                self._ask(message)
            case Commit():
                self._commit(message)
            case ForkFailed():
                self._fork_failed(message)
            case Notify():
                outcome = self._notify(message.events)
                if message.reply is not None:
                    message.reply.set_result(outcome)
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
                fresh = cache_economics_for(message.services.settings)
                self.economics.retarget(fresh.pricing, fresh.policy)  # keeps the learnt gaps
            case Drain():
                self.closing = True
                self.draining.append(message.reply)
                self._maybe_drained()
            case _:
                super().handle(message)

    def stats(self) -> dict[str, object]:
        return workspace_stats(self)

    # --- questions -----------------------------------------------------------------------
    def _limit(self) -> int:
        settings = self.services.settings
        return 1 if settings.concurrency == "serial" else settings.max_parallel_queries

    def _ask(self, ask: Ask) -> None:
        if self.closing:
            ask.reply.set_exception(ShuttingDown("the server is shutting down"))
            return
        try:
            self.services.spend.check(self.root)
        except BudgetExhausted as exc:
            ask.reply.set_exception(exc)
            return
        if len(self.pending) >= self.services.settings.max_pending_questions:
            waiting = len(self.pending)
            ask.reply.set_exception(
                Busy(
                    f"workspace {self.root} has {waiting} questions waiting "
                    "(LIVE_MEMORY_MAX_PENDING_QUESTIONS); retry later"
                )
            )
            return
        self.pending.append(ask)
        self._admit()

    def _admit(self) -> None:
        while self.pending and len(self.in_flight) < self._limit():
            ask = self.pending.popleft()
            if ask.reply.done():  # the asker went away while waiting
                continue
            self._spawn(ask)

    def _spawn(self, ask: Ask) -> None:
        self._ensure_tree()
        self.window.sync_deltas()
        hints = tuple(self.window.drain_recently_modified())
        now = time.monotonic()
        self.economics.observe_question(now)
        cache = self.economics.decide(now, prefix_tokens(self)[1])
        job = QuestionJob(
            question=ask.question,
            window=self.window.copy(),
            recently_modified=hints,
            soft_deadline=ask.soft_deadline,
            max_answer_tokens=ask.max_answer_tokens,
            workspace_key=self._cache_key(),
            gate=self.gate,
            cache_ttl=cache.ttl,
            cache_breakpoints=cache.breakpoints,
        )
        fork_id = next(self.fork_ids)
        ref = self.system.start(
            ForkActor,
            f"{self.root}#fork-{fork_id}",
            fork_id=fork_id,
            workspace=self.actor_ref,
            job=job,
            services=self.services,
            toolbox=self.toolbox,
            base_version=self.version,
            base_seq=self.seq,
        )
        self.in_flight[fork_id] = _Slot(ask, ref, self.version, cache.ttl)
        ask.reply.add_done_callback(
            lambda f: ref.tell(Cancel("asker went away")) if f.cancelled() else None
        )
        ref.tell(StartFork())

    def _cache_key(self) -> str:
        return "live-memory-" + hashlib.sha256(self.root.encode()).hexdigest()[:24]

    def _commit(self, commit: Commit) -> None:
        slot = self.in_flight.pop(commit.fork_id, None)
        outcome: QuestionOutcome = commit.result
        decision = decide_commit(
            commit.base_version,
            self.version,
            self.wiped_at_version,
            outcome.exploration,
            self.current_score,
        )
        if decision != "race_dropped":
            window: Window = commit.window
            for seq, event in self.notify_log:
                if seq <= commit.base_seq:
                    continue
                if isinstance(event, FileEvent):
                    self.ingestor.apply(window, event.path, event.kind, event.content)
                else:
                    window.learn(event)
            window.recently_modified = list(
                dict.fromkeys([*window.recently_modified, *self.window.recently_modified])
            )
            self.window = window
            self.version += 1
            self.current_score = outcome.exploration
        self.counters.record(outcome, decision, self.services)
        done = time.monotonic()
        for usage in outcome.loop.usage_by_call:
            self.economics.observe_usage(done, usage, slot.ttl if slot else None)
        self.services.spend.record(
            self.root,
            outcome.loop.usage + outcome.summary_usage,
            outcome.cost_usd,
            question=True,
        )
        self.last_question_at = self.last_touch = time.monotonic()
        self.dirty = True
        self._flush()
        self._trim_notify_log()
        if outcome.compacted:
            background.write_insights(self)
        if slot is not None and not slot.ask.reply.done():
            slot.ask.reply.set_result(self._answer(outcome))
        self._admit()
        background.drain_transcripts(self)
        self._maybe_drained()

    def _answer(self, outcome: QuestionOutcome) -> Answer:
        loop = outcome.loop
        return Answer(
            text=f"{outcome.answer_text}\n{outcome.trailer}",
            answer=outcome.answer_text,
            model=loop.model,
            latency_s=outcome.latency_s,
            usage=loop.usage,
            tool_calls=loop.tool_calls,
            files_read=loop.files_read,
            cost_usd=outcome.cost_usd,
            context_pct=outcome.context_pct,
            timed_out=loop.timed_out,
            stop_reason=loop.stop_reason,
            provider_s=loop.provider_s,
        )

    def _fork_failed(self, failed: ForkFailed) -> None:
        slot = self.in_flight.pop(failed.fork_id, None)
        self.counters.failures += 1
        if slot is not None and not slot.ask.reply.done():
            slot.ask.reply.set_exception(failed.error)
        self._trim_notify_log()
        self._admit()
        background.drain_transcripts(self)
        self._maybe_drained()

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
