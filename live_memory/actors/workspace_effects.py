"""Carrying out a WorkspaceState's effects: forks, replies, snapshots, spend.

A mixin of WorkspaceActor (kept apart so the dispatcher stays short; configuring and
loading an incarnation is WorkspaceLoader's, in actors/workspace_loading.py). Every effect
is guarded on its own: a failing snapshot write becomes the asker's clear error, a failing
spend record is logged and recorded, and a fork that cannot start fails its question — the
caller is resolved in every outcome and nothing here can take the workspace down.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future
from typing import Any

from live_memory.actors import background
from live_memory.actors.fork import Fork
from live_memory.actors.message import Ask, RequestPassivation, Route
from live_memory.actors.rereader import start_rereads
from live_memory.actors.runtime import ActorInfo, ActorRef, ActorSystem
from live_memory.actors.symbol_shell import core_map_of, index_covers, retrievers_of
from live_memory.actors.workspace_loading import WorkspaceLoader
from live_memory.agent import QuestionJob, QuestionProgress, fact_retrievers, retrieve_all
from live_memory.prompt_cache import CacheDecision
from live_memory.workspace import (
    Account,
    CancelFork,
    DeleteSnapshot,
    Drained,
    Effect,
    Fail,
    Forward,
    Persist,
    ReadFiles,
    Reply,
    WantDistil,
    WantPassivation,
    WriteInsights,
)
from live_memory.workspace import StartFork as StartForkEffect

__all__ = ["EffectRunner"]

logger = logging.getLogger(__name__)


class EffectRunner(WorkspaceLoader):
    """The effects of a configured and loaded workspace (the fields are WorkspaceLoader's)."""

    cache_decision: CacheDecision | None
    system: ActorSystem
    gateway: ActorRef[Any]
    slots: dict[int, Future[Any]]
    boards: dict[int, QuestionProgress]
    info: ActorInfo

    @property
    def actor_ref(self) -> ActorRef[Any]:
        raise NotImplementedError

    def deliver(self, slot: int, value: Any = None, *, error: BaseException | None = None) -> None:
        raise NotImplementedError

    # --- effects --------------------------------------------------------------------------
    def run(self, effects: Sequence[Effect]) -> None:
        """Carry out `effects` in order (and whatever they lead to), each guarded. A
        snapshot written on the way is settled in the background once they are done: the
        answers it carried go out as soon as it survives a crash of the server, and neither
        they nor the next message wait for its fsync (memory/snapshot_store.py)."""
        queue: deque[Effect] = deque(effects)
        wrote = False
        while queue:
            effect = queue.popleft()
            wrote = wrote or isinstance(effect, Persist)
            try:
                queue.extend(self._carry_out(effect))
            except Exception as exc:  # one effect failing must not skip the rest
                logger.exception("workspace %s: %s failed", self.root, type(effect).__name__)
                self.info.failures += 1
                self.info.last_error = f"{type(exc).__name__}: {exc}"
                if isinstance(effect, StartForkEffect):
                    queue.extend(self.state.fork_failed(effect.fork_id, exc))
        if wrote:
            self.store.settle_soon(self.path)

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
            self.store.save(self.path, snapshot, settle=False)  # settled after the replies
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
        retrievers = (*retrievers_of(self.symbols), *fact_retrievers(self.services, spec.window))
        # Asked here, on this worker, while the window copy is still ours to read: on the I/O
        # loop they would go to a worker thread and back (store queries must not block it).
        retrieved = retrieve_all(retrievers, spec.question, spec.window) if retrievers else None
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
            retrievers=retrievers,
            retrieved=retrieved,
            core_map=core_map_of(self.symbols),
            progress=self.boards.get(spec.slot),
            index_grounded=index_covers(
                self.symbols, spec.window.tree, map_partial=self.map_partial
            ),
        )

    def launch_fork(self, spec: StartForkEffect, job: QuestionJob) -> None:
        """Run `job` on the I/O loop as a Fork of this process (the Ray host runs it as a
        Ray task); its Commit comes straight back to this actor."""
        fork = Fork(
            self.system,
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
        fork.start()
        self.forks[spec.fork_id] = fork

    def cancel_fork(self, fork_id: int, reason: str) -> None:
        fork = self.forks.get(fork_id)
        if fork is not None:  # one that finished meanwhile reports anyway (ForkCancelled)
            fork.cancel(reason)
