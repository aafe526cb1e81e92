"""A workspace's background work: keep-warm pings, transcript distillation, knowledge files.

Functions over the WorkspaceActor that owns the state (they run in its thread); kept apart
because this is the work that yields first — to waiting questions and to a spent budget.
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any

from live_memory.actors import questions
from live_memory.actors.message import (
    DescribeMemory,
    ExportLedger,
    ImportFacts,
    KeepWarmTick,
    PingDone,
    TranscriptDistilled,
)
from live_memory.agent.prompt import SYSTEM_PROMPT
from live_memory.agent.summarizer import summarize
from live_memory.config import constants as C
from live_memory.errors import LiveMemoryError
from live_memory.knowledge import QueuedTranscript, digest_transcript, export_ledger
from live_memory.memory.layout import build_request
from live_memory.memory.ledger import attribute_facts, parse_fact_lines
from live_memory.memory.model import LedgerFact
from live_memory.prompt_cache import ping_due
from live_memory.providers.types import ChatResponse, Provider, Usage
from live_memory.tools import Toolbox

if TYPE_CHECKING:
    from live_memory.actors.workspace import WorkspaceActor

__all__ = [
    "background_message",
    "drain_transcripts",
    "facts_as_json",
    "learn",
    "write_insights",
]

logger = logging.getLogger(__name__)

_DIGEST_INTRO = "Conversation digest (a coding session in this repository, newest last):\n"


def facts_as_json(facts: list[LedgerFact]) -> list[dict[str, object]]:
    return [
        {"text": f.text, "category": f.category, "stale": f.stale, "sources": list(f.sources)}
        for f in facts
    ]


def _ping_outcome(future: Future[ChatResponse]) -> PingDone:
    try:
        return PingDone(future.result().usage)
    except Exception as exc:  # a failed ping is reported, never raised
        return PingDone(None, f"{type(exc).__name__}: {exc}")


def _distilled(row_id: int, future: Future[tuple[str, Usage]]) -> TranscriptDistilled:
    try:
        text, usage = future.result()
        return TranscriptDistilled(row_id, text, usage)
    except Exception as exc:  # a failed distillation is counted against the row's retries
        return TranscriptDistilled(row_id, None, None, f"{type(exc).__name__}: {exc}")


async def _distil(
    provider: Provider, model: str, ledger: list[LedgerFact], row: QueuedTranscript, root: Path
) -> tuple[str, Usage]:
    digest = row.digest
    if digest is None:
        digest = digest_transcript(
            Path(row.transcript_path), max_chars=C.TRANSCRIPT_DIGEST_MAX_CHARS, root=root
        ).text
    return await summarize(provider, model, ledger, _DIGEST_INTRO + digest)


# --- keep-warm ---------------------------------------------------------------------
def keep_warm(actor: WorkspaceActor, tick: KeepWarmTick) -> None:
    """Ping the cached prefix when the design's eligibility rule holds: a non-empty
    window, no question in flight, queried within max-idle, untouched for the interval,
    and a prompt long enough to be cached at all."""
    now = time.monotonic()
    provider = actor.services.provider
    if (
        provider is None
        or actor.pinging
        or actor.in_flight
        or actor.pending
        or not actor.window.history
        or not ping_due(
            now=now,
            last_question_at=actor.last_question_at,
            last_touch=actor.last_touch,
            interval_s=tick.interval_s,
            max_idle_s=tick.max_idle_s,
        )
        or actor.services.spend.background_paused(actor.root)
    ):
        return
    cache = actor.cache_decision = questions.decide_cache(actor)
    if not cache.breakpoints:
        return
    request = build_request(
        actor.window,
        system_prompt=SYSTEM_PROMPT,
        trailing=None,
        tools=Toolbox.specs(),
        model=actor.services.model,
        max_tokens=C.KEEP_WARM_PING_MAX_TOKENS,
        cache_key=questions.cache_key(actor),
        cache_ttl=cache.ttl,
        min_cache_tokens=cache.min_breakpoint_tokens,
    )
    actor.ping_ttl = cache.ttl
    actor.pinging, actor.last_touch = True, now
    ref = actor.actor_ref
    future = actor.system.io.submit(provider.chat(request))
    future.add_done_callback(lambda f: ref.tell(_ping_outcome(f)))


def ping_done(actor: WorkspaceActor, done: PingDone) -> None:
    actor.pinging = False
    if done.usage is None:
        logger.info("keep-warm ping for %s failed: %s", actor.root, done.error)
        return
    cost = actor.services.cost(done.usage)
    actor.counters.record_ping(done.usage, cost)
    actor.services.spend.record(actor.root, done.usage, cost, question=False)
    actor.dirty = True


# --- transcripts -------------------------------------------------------------------
def drain_transcripts(actor: WorkspaceActor) -> None:
    """Distil the next queued transcript: only when idle (never ahead of a waiting
    question), one at a time, and never while the budget pauses background work."""
    provider = actor.services.provider
    if (
        provider is None
        or actor.distilling is not None
        or actor.pending
        or actor.in_flight
        or actor.closing
        or actor.passivating
        or actor.services.spend.background_paused(actor.root)
    ):
        return
    row = actor.services.stores.transcripts.claim(actor.root)
    if row is None:
        return
    actor.distilling = row.id
    ref = actor.actor_ref
    coro = _distil(
        provider,
        actor.services.settings.effective_summary_model,
        list(actor.window.ledger),
        row,
        actor.path,
    )
    future = actor.system.io.submit(coro)
    future.add_done_callback(lambda f: ref.tell(_distilled(row.id, f)))


def transcript_distilled(actor: WorkspaceActor, done: TranscriptDistilled) -> None:
    actor.distilling = None
    queue = actor.services.stores.transcripts
    if done.text is None or done.usage is None:
        status = queue.fail(done.row_id, done.error or "distillation failed")
        logger.warning("transcript %d for %s: %s (%s)", done.row_id, actor.root, done.error, status)
    else:
        facts = attribute_facts(parse_fact_lines(done.text), actor.window.known_hashes())
        added = learn(actor, facts)
        queue.done(done.row_id)
        cost = actor.services.cost(done.usage)
        actor.counters.add_usage(done.usage, cost)
        actor.services.spend.record(actor.root, done.usage, cost, question=False)
        logger.info("transcript %d for %s: %d new fact(s)", done.row_id, actor.root, added)
        actor.dirty = True
        actor._flush()
        write_insights(actor)
    drain_transcripts(actor)


# --- sharing knowledge ---------------------------------------------------------------
def export_facts(actor: WorkspaceActor, message: ExportLedger) -> None:
    message.reply.set_result(
        {
            "workspace": actor.root,
            "repo": actor.path.name,
            "facts": facts_as_json(actor.window.ledger),
        }
    )


def import_facts(actor: WorkspaceActor, message: ImportFacts) -> None:
    added = learn(actor, list(message.facts))
    actor.dirty = True
    actor._flush()
    write_insights(actor)
    held, cap = len(actor.window.ledger), actor.services.settings.max_ledger_facts
    reply: dict[str, object] = {"added": added, "ledger_facts": held}
    if held >= cap:
        reply["ledger_full"] = (
            f"the ledger holds LIVE_MEMORY_MAX_LEDGER_FACTS ({cap}) facts; facts past it "
            "were not added (export, prune and re-import, or raise the limit)"
        )
    message.reply.set_result(reply)


def describe(actor: WorkspaceActor, message: DescribeMemory) -> None:
    fresh = [f.text for f in actor.window.ledger if not f.stale]
    lines = [
        f"Live Memory knows {len(actor.window.ledger)} fact(s) and {len(actor.window.files)} "
        f"file(s) of this workspace; {actor.counters.questions_answered} question(s) answered."
    ]
    used = len(lines[0])
    for text in fresh:
        if used + len(text) + 3 > message.max_chars:
            break
        lines.append(f"- {text}")
        used += len(text) + 3
    summary = "\n".join(lines) if fresh or actor.counters.questions_answered else None
    message.reply.set_result({"summary": summary})


def write_insights(actor: WorkspaceActor) -> None:
    """Keep `<LIVE_MEMORY_INSIGHTS_ROOT>/<repo>/<category>.md` up to date."""
    root = actor.services.settings.insights_root
    if root is None:
        return
    try:
        export_ledger(actor.window.ledger, root / actor.path.name, repo_name=actor.path.name)
    except (LiveMemoryError, OSError, ValueError):
        logger.exception("could not write insights for %s", actor.root)


def learn(actor: WorkspaceActor, facts: list[LedgerFact]) -> int:
    """Merge facts; logged for replay so a concurrent fork's commit cannot lose them."""
    added = actor.window.learn(facts, actor.services.settings.max_ledger_facts)
    if actor.in_flight and facts:
        actor.seq += 1
        actor.notify_log.append((actor.seq, tuple(facts)))
    return added


def background_message(actor: WorkspaceActor, message: Any) -> bool:
    """Handle a background-work message; False when it is not one."""
    match message:
        case KeepWarmTick():
            keep_warm(actor, message)
        case PingDone():
            ping_done(actor, message)
        case TranscriptDistilled():
            transcript_distilled(actor, message)
        case ExportLedger():
            export_facts(actor, message)
        case ImportFacts():
            import_facts(actor, message)
        case DescribeMemory():
            describe(actor, message)
        case _:
            return False
    return True
