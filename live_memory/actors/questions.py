"""A workspace's questions: admission, forking, and the optimistic commit of the answers.

Functions over the WorkspaceActor that owns the state (they run in its thread).
"""

from __future__ import annotations

import hashlib
import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from live_memory.actors import background
from live_memory.actors.fork import ForkActor
from live_memory.actors.message import (
    Answer,
    Ask,
    Cancel,
    Commit,
    FileEvent,
    ForkFailed,
    StartFork,
)
from live_memory.actors.runtime import ActorRef
from live_memory.actors.workspace_stats import prefix_tokens
from live_memory.agent.question import QuestionJob, QuestionOutcome
from live_memory.errors import BudgetExhausted, Busy, ShuttingDown
from live_memory.memory.commit import decide_commit
from live_memory.memory.window import Window
from live_memory.prompt_cache import CacheDecision, decide
from live_memory.providers.types import CacheTtl

if TYPE_CHECKING:
    from live_memory.actors.workspace import WorkspaceActor

__all__ = ["Slot", "admit", "ask", "cache_key", "commit", "fork_failed"]

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class Slot:
    """A question in flight: its asker, its fork, the version it was taken at."""

    ask: Ask
    ref: ActorRef[Any]
    base_version: int
    ttl: CacheTtl | None


def limit(actor: WorkspaceActor) -> int:
    settings = actor.services.settings
    return 1 if settings.concurrency == "serial" else settings.max_parallel_queries


def ask(actor: WorkspaceActor, ask: Ask) -> None:
    if actor.closing:
        ask.reply.set_exception(ShuttingDown("the server is shutting down"))
        return
    try:
        actor.services.spend.check(actor.root)
    except BudgetExhausted as exc:
        ask.reply.set_exception(exc)
        return
    if len(actor.pending) >= actor.services.settings.max_pending_questions:
        waiting = len(actor.pending)
        ask.reply.set_exception(
            Busy(
                f"workspace {actor.root} has {waiting} questions waiting "
                "(LIVE_MEMORY_MAX_PENDING_QUESTIONS); retry later"
            )
        )
        return
    actor.pending.append(ask)
    admit(actor)


def admit(actor: WorkspaceActor) -> None:
    while actor.pending and len(actor.in_flight) < limit(actor):
        ask = actor.pending.popleft()
        if ask.reply.done():  # the asker went away while waiting
            continue
        spawn(actor, ask)


def spawn(actor: WorkspaceActor, ask: Ask) -> None:
    actor._ensure_tree()
    actor.window.sync_deltas()
    hints = tuple(actor.window.drain_recently_modified())
    cache = actor.cache_decision = decide_cache(actor)
    job = QuestionJob(
        question=ask.question,
        window=actor.window.copy(),
        recently_modified=hints,
        soft_deadline=ask.soft_deadline,
        max_answer_tokens=ask.max_answer_tokens,
        workspace_key=cache_key(actor),
        gate=actor.gate,
        cache_ttl=cache.ttl,
        cache_min_tokens=cache.min_breakpoint_tokens,
    )
    fork_id = next(actor.fork_ids)
    ref = actor.system.start(
        ForkActor,
        f"{actor.root}#fork-{fork_id}",
        fork_id=fork_id,
        workspace=actor.actor_ref,
        job=job,
        services=actor.services,
        toolbox=actor.toolbox,
        base_version=actor.version,
        base_seq=actor.seq,
    )
    actor.in_flight[fork_id] = Slot(ask, ref, actor.version, cache.ttl)
    ask.reply.add_done_callback(
        lambda f: ref.tell(Cancel("asker went away")) if f.cancelled() else None
    )
    ref.tell(StartFork())


def decide_cache(actor: WorkspaceActor) -> CacheDecision:
    """The prompt-cache decision for the workspace's prompt as it stands."""
    services = actor.services
    size = prefix_tokens(actor).through_history
    return decide(services.cache_policy, size, services.pricing.min_cacheable_tokens)


def cache_key(actor: WorkspaceActor) -> str:
    return "live-memory-" + hashlib.sha256(actor.root.encode()).hexdigest()[:24]


def commit(actor: WorkspaceActor, commit: Commit) -> None:
    slot = actor.in_flight.pop(commit.fork_id, None)
    outcome: QuestionOutcome = commit.result
    decision = decide_commit(
        commit.base_version,
        actor.version,
        actor.wiped_at_version,
        outcome.exploration,
        actor.current_score,
    )
    if decision != "race_dropped":
        window: Window = commit.window
        for seq, event in actor.notify_log:
            if seq <= commit.base_seq:
                continue
            if isinstance(event, FileEvent):
                actor.ingestor.apply(window, event.path, event.kind, event.content)
            else:
                window.learn(event, actor.services.settings.max_ledger_facts)
        window.recently_modified = list(
            dict.fromkeys([*window.recently_modified, *actor.window.recently_modified])
        )
        actor.window = window
        actor.version += 1
        actor.current_score = outcome.exploration
    actor.counters.record(outcome, decision, actor.services)
    actor.services.spend.record(
        actor.root,
        outcome.loop.usage + outcome.summary_usage,
        outcome.cost_usd,
        question=True,
    )
    actor.last_question_at = actor.last_touch = time.monotonic()
    actor.dirty = True
    actor._flush()
    actor._trim_notify_log()
    if outcome.compacted:
        background.write_insights(actor)
    if slot is not None and not slot.ask.reply.done():
        slot.ask.reply.set_result(answer(actor, outcome))
    admit(actor)
    background.drain_transcripts(actor)
    actor._maybe_drained()


def answer(actor: WorkspaceActor, outcome: QuestionOutcome) -> Answer:
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


def fork_failed(actor: WorkspaceActor, failed: ForkFailed) -> None:
    slot = actor.in_flight.pop(failed.fork_id, None)
    actor.counters.failures += 1
    if slot is not None and not slot.ask.reply.done():
        slot.ask.reply.set_exception(failed.error)
    actor._trim_notify_log()
    admit(actor)
    background.drain_transcripts(actor)
    actor._maybe_drained()
