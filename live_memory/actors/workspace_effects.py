"""Carrying out a WorkspaceState's effects: forks, replies, snapshots, spend.

A mixin of WorkspaceActor (kept apart so the dispatcher stays short). Every effect is guarded
on its own: a failing snapshot write becomes the asker's clear error, a failing spend record
is logged and recorded, and a fork that cannot start fails its question — the caller is
resolved in every outcome and nothing here can take the workspace down.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from live_memory.actors import background
from live_memory.actors.fork import ForkActor
from live_memory.actors.message import Ask, Cancel, RequestPassivation, Route, StartFork
from live_memory.actors.rereader import start_rereads
from live_memory.actors.runtime import ActorDeadError, ActorInfo, ActorRef, ActorSystem
from live_memory.actors.symbol_shell import core_map_of, index_covers, open_index, retrievers_of
from live_memory.agent import (
    QuestionJob,
    QuestionProgress,
    Services,
    fact_retrievers,
    resident_facts,
    stable_tree,
    store_learnt,
)
from live_memory.config import constants as C
from live_memory.index import WorkspaceIndex
from live_memory.memory import (
    Ingestor,
    Snapshots,
    Window,
    held_bytes_cap,
    preload,
    window_from_state,
)
from live_memory.prompt_cache import CacheDecision
from live_memory.tools import Toolbox, current_sha256
from live_memory.workspace import (
    Account,
    CancelFork,
    DeleteSnapshot,
    Drained,
    Effect,
    Fail,
    Forward,
    Limits,
    Persist,
    ReadFiles,
    Reply,
    WantDistil,
    WantPassivation,
    WorkspaceCounters,
    WorkspaceState,
    WriteInsights,
)
from live_memory.workspace import StartFork as StartForkEffect

__all__ = ["EffectRunner"]

logger = logging.getLogger(__name__)


class EffectRunner:
    root: str
    path: Path
    state: WorkspaceState
    services: Services
    toolbox: Toolbox
    ingestor: Ingestor
    cache_decision: CacheDecision | None
    store: Snapshots
    system: ActorSystem
    gateway: ActorRef[Any]
    slots: dict[int, Future[Any]]
    boards: dict[int, QuestionProgress]
    info: ActorInfo
    forks: dict[int, ActorRef[Any]]
    symbols: WorkspaceIndex | None
    map_partial: bool

    @property
    def actor_ref(self) -> ActorRef[Any]:
        raise NotImplementedError

    def deliver(self, slot: int, value: Any = None, *, error: BaseException | None = None) -> None:
        raise NotImplementedError

    # --- configuration and loading --------------------------------------------------------
    def _configure(self, services: Services) -> None:
        self.services = services
        settings = services.settings
        if not hasattr(self, "symbols"):  # once per incarnation, released when it stops
            self.symbols = open_index(services, self.path)
            self.map_partial = False
        self.toolbox = Toolbox(
            self.path,
            secret_patterns=settings.secret_path_patterns,
            file_globs=settings.file_globs,
            max_output_chars=services.tool_output_chars,  # scaled with the window
            symbols=self.symbols,
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
        self.forks = getattr(self, "forks", {})
        if hasattr(self, "state"):
            self.state.ingestor, self.state.limits = self.ingestor, self.limits()

    def limits(self) -> Limits:
        settings = self.services.settings
        return Limits(
            concurrency=1 if settings.concurrency == "serial" else settings.max_parallel_queries,
            max_pending=settings.max_pending_questions,
            max_context_tokens=self.services.max_context_tokens,
            refreeze_delta_share=C.DELTA_REFREEZE_SHARE,
            manifest_debounce_s=C.MANIFEST_SNAPSHOT_DEBOUNCE_S,
            notify_log_max_bytes=C.NOTIFY_LOG_MAX_BYTES,
            max_ledger_facts=settings.max_ledger_facts,
        )

    def new_state(self) -> WorkspaceState:
        return WorkspaceState(self.root, self.ingestor, self.limits(), time.monotonic())

    def restore(self) -> None:
        body = self.store.load(self.path)
        if body is None:
            return
        secrets = self.services.settings.secret_path_patterns
        try:
            window = window_from_state(
                self.root, body, lambda p: current_sha256(self.path, p, secret_patterns=secrets)
            )
            counters = body.get("counters", {})
            # The store is where facts live, the snapshot the window's projection of it.
            store_learnt(self.services, self.root, window.ledger)
            self.state.restore(
                window,
                WorkspaceCounters.from_state(counters if isinstance(counters, dict) else {}),
                int(str(body.get("version", 0))),
            )
            self.state.restore_fresh(body)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            logger.warning("snapshot of %s is malformed (%s); starting empty", self.root, exc)
            self.store.quarantine(self.path, repr(exc))
            self.state.restore(Window(root=self.root), WorkspaceCounters(), 0)

    def load_workspace(self) -> None:
        """Preload globs, make the ledger the store's resident set, then freeze the
        prompt's volatile block."""
        settings = self.services.settings
        window = self.state.window
        resident = resident_facts(self.services, self.root)
        if resident is not None:
            window.ledger = resident
        floor_chars = int(
            self.services.max_context_tokens * settings.compaction_floor * window.chars_per_token
        )
        preload(
            window,
            self.path,
            settings.preload_globs,
            total_cap_bytes=min(C.PRELOAD_MAX_TOTAL_BYTES, floor_chars // 2),
            secret_patterns=settings.secret_path_patterns,
            held_cap=self.ingestor.max_held_bytes,
        )
        window.freeze()
        background.drain_transcripts(self)  # type: ignore[arg-type]

    def ensure_tree(self) -> None:
        """Built when the first question needs it, not at activation: walking a huge root
        must not hold up notifications, stats or wipes. Rebuilt after the watcher saw HEAD
        move, or once the index's first pass completes a core map built from a partial index,
        when no fork carries the old one, together with a freeze (a new tree and core map
        change the stable prefix)."""
        state = self.state
        index = self.symbols
        map_behind = self.map_partial and index is not None and index.complete
        rebuild = (state.tree_stale or map_behind) and not state.in_flight
        if not state.tree_built or rebuild:
            refreeze = state.tree_built
            core_map = core_map_of(index, first=not refreeze)
            self.map_partial = index is not None and not index.complete
            state.set_tree(stable_tree(self.path, self.services, core_map))
            if refreeze:
                state.window.freeze()

    # --- effects --------------------------------------------------------------------------
    def run(self, effects: Sequence[Effect]) -> None:
        """Carry out `effects` in order (and whatever they lead to), each guarded."""
        queue: deque[Effect] = deque(effects)
        while queue:
            effect = queue.popleft()
            try:
                queue.extend(self._carry_out(effect))
            except Exception as exc:  # one effect failing must not skip the rest
                logger.exception("workspace %s: %s failed", self.root, type(effect).__name__)
                self.info.failures += 1
                self.info.last_error = f"{type(exc).__name__}: {exc}"
                if isinstance(effect, StartForkEffect):
                    queue.extend(self.state.fork_failed(effect.fork_id, exc))

    def _carry_out(self, effect: Effect) -> Sequence[Effect]:
        match effect:
            case Reply():
                self.deliver(effect.slot, effect.value)
            case Fail():
                self.deliver(effect.slot, error=effect.error)
            case Persist():
                return self.state.persisted(effect.ticket, self._write(effect.snapshot))
            case StartForkEffect():
                self.start_fork(effect)
            case CancelFork():
                self.cancel_fork(effect.fork_id, effect.reason)
            case Account():
                self._account(effect)
            case DeleteSnapshot():
                self.store.delete(self.path)
                if self.services.stores.facts is not None:  # a wipe forgets the facts too
                    self.services.stores.facts.wipe(self.root)
            case WriteInsights():
                background.write_insights(self)  # type: ignore[arg-type]
            case WantDistil():
                background.drain_transcripts(self)  # type: ignore[arg-type]
            case WantPassivation():
                self.gateway.tell(RequestPassivation(self.root))
            case Forward():
                reply = self.slots.pop(effect.question.slot, None)
                if reply is not None:
                    q = effect.question
                    board = self.boards.pop(q.slot, None)
                    ask = Ask(q.question, q.max_answer_tokens, q.soft_deadline, reply, board)
                    self.gateway.tell(Route(self.root, ask))
            case Drained():
                self.deliver(effect.slot, None)
            case ReadFiles():
                start_rereads(
                    self.system,
                    self.actor_ref,
                    self.path,
                    effect,
                    max_file_bytes=self.ingestor.max_file_bytes,
                    secret_patterns=self.ingestor.secret_patterns,
                )
        return ()

    def _write(self, snapshot: dict[str, object]) -> str | None:
        """Write a snapshot; the reason it failed, or None."""
        try:
            self.store.save(self.path, snapshot)
        except Exception as exc:  # disk full, permissions, serialisation: reported, not raised
            logger.error("snapshot of %s not written: %s", self.root, exc)
            return f"{type(exc).__name__}: {exc}"
        return None

    def _account(self, account: Account) -> None:
        self.services.spend.record(
            self.root, account.usage, account.cost_usd, question=account.question
        )

    def start_fork(self, spec: StartForkEffect) -> None:
        self.launch_fork(spec, self.fork_job(spec))

    def fork_job(self, spec: StartForkEffect) -> QuestionJob:
        """What the fork of `spec` runs: its window copy, the cache decision, retrievers."""
        cache = self.cache_decision = background.decide_cache(self.services, spec.window)
        return QuestionJob(
            question=spec.question,
            window=spec.window,
            recently_modified=spec.recently_modified,
            soft_deadline=spec.soft_deadline,
            max_answer_tokens=spec.max_answer_tokens,
            workspace_key=background.cache_key(self.root),
            gate=self.state.gate,
            cache_ttl=cache.ttl,
            cache_min_tokens=cache.min_breakpoint_tokens,
            retrievers=(
                *retrievers_of(self.symbols),
                *fact_retrievers(self.services, spec.window),
            ),
            core_map=core_map_of(self.symbols),
            progress=self.boards.get(spec.slot),
            index_grounded=index_covers(
                self.symbols, spec.window.tree, map_partial=self.map_partial
            ),
        )

    def launch_fork(self, spec: StartForkEffect, job: QuestionJob) -> None:
        """Run `job` in a ForkActor of this process (the Ray host runs it as a Ray task)."""
        ref = self.system.start(
            ForkActor,
            f"{self.root}#fork-{spec.fork_id}",
            fork_id=spec.fork_id,
            workspace=self.actor_ref,
            gateway=self.gateway,
            job=job,
            services=self.services,
            toolbox=self.toolbox,
            base_version=spec.base_version,
            base_seq=spec.base_seq,
        )
        self.forks[spec.fork_id] = ref
        ref.tell(StartFork())

    def cancel_fork(self, fork_id: int, reason: str) -> None:
        ref = self.forks.get(fork_id)
        if ref is not None:
            try:
                ref.tell(Cancel(reason))
            except ActorDeadError:  # it finished meanwhile; its report is on its way
                self.forks.pop(fork_id, None)
