"""A workspace's background work: keep-warm pings, transcript distillation, knowledge files.

Functions over the workspace shell (they run in its thread; typed against `BackgroundHost`
so this module never imports the actor); kept apart because this is the work that yields
first — to waiting questions and to a spent budget.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Protocol

from live_memory.actors import fact_import
from live_memory.actors.message import (
    DescribeMemory,
    ExportLedger,
    FactsMerged,
    ImportFacts,
    KeepWarmTick,
    PingDone,
    TranscriptDistilled,
)
from live_memory.actors.runtime import ActorRef, ActorSystem, resolve
from live_memory.actors.workspace_stats import prefix_tokens
from live_memory.agent import SYSTEM_PROMPT, Services, known_facts, store_learnt, summarize
from live_memory.config import constants as C
from live_memory.errors import LiveMemoryError
from live_memory.knowledge import QueuedTranscript, digest_transcript, export_ledger
from live_memory.memory import LedgerFact, Window, attribute_facts, build_request, parse_fact_lines
from live_memory.prompt_cache import CacheDecision, decide
from live_memory.providers import CacheTtl, ChatResponse, Provider, Usage
from live_memory.tools import Toolbox
from live_memory.workspace import Effect, WorkspaceState

__all__ = [
    "BackgroundHost",
    "background_message",
    "cache_key",
    "decide_cache",
    "drain_transcripts",
    "facts_as_json",
    "write_insights",
]

logger = logging.getLogger(__name__)

_DIGEST_INTRO = "Conversation digest (a coding session in this repository, newest last):\n"


class BackgroundHost(Protocol):
    root: str
    path: Path
    state: WorkspaceState
    services: Services
    system: ActorSystem
    ping_ttl: CacheTtl | None
    cache_decision: CacheDecision | None

    @property
    def actor_ref(self) -> ActorRef[Any]: ...

    def run(self, effects: Sequence[Effect]) -> None: ...


def decide_cache(services: Services, window: Window) -> CacheDecision:
    """The prompt-cache decision for `window`'s prompt as it stands."""
    size = prefix_tokens(window).through_history
    return decide(services.cache_policy, size, services.pricing.min_cacheable_tokens)


def cache_key(root: str) -> str:
    return "live-memory-" + hashlib.sha256(root.encode()).hexdigest()[:24]


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
def keep_warm(host: BackgroundHost, tick: KeepWarmTick) -> None:
    """Ping the cached prefix when the design's eligibility rule holds (state.keep_warm_due),
    the budget allows it and the prompt is long enough to be cached at all."""
    now = time.monotonic()
    provider, state = host.services.provider, host.state
    if (
        provider is None
        or not state.keep_warm_due(now, tick.max_idle_s, tick.interval_s)
        or host.services.spend.background_paused(host.root)
    ):
        return
    cache = host.cache_decision = decide_cache(host.services, state.window)
    if not cache.breakpoints:
        return
    request = build_request(
        state.window,
        system_prompt=SYSTEM_PROMPT,
        trailing=None,
        tools=Toolbox.specs(),
        model=host.services.model,
        max_tokens=C.KEEP_WARM_PING_MAX_TOKENS,
        cache_key=cache_key(host.root),
        cache_ttl=cache.ttl,
        min_cache_tokens=cache.min_breakpoint_tokens,
    )
    host.ping_ttl = cache.ttl
    state.pinging, state.last_touch = True, now
    ref = host.actor_ref
    future = host.system.io.submit(provider.chat(request))
    future.add_done_callback(lambda f: ref.tell(_ping_outcome(f)))


def ping_done(host: BackgroundHost, done: PingDone) -> None:
    now = time.monotonic()
    if done.usage is None:
        logger.info("keep-warm ping for %s failed: %s", host.root, done.error)
        host.state.ping_done(None, None, now)
        return
    cost = host.services.cost(done.usage)
    host.state.ping_done(done.usage, cost, now)
    host.services.spend.record(host.root, done.usage, cost, question=False)


# --- transcripts -------------------------------------------------------------------
def drain_transcripts(host: BackgroundHost) -> None:
    """Distil the next queued transcript: only when idle (never ahead of a waiting
    question), one at a time, and never while the budget pauses background work."""
    provider, state = host.services.provider, host.state
    if (
        provider is None
        or state.distilling is not None
        or state.pending
        or state.in_flight
        or state.closing
        or host.services.spend.background_paused(host.root)
    ):
        return
    row = host.services.stores.transcripts.claim(host.root)
    if row is None:
        return
    state.distil_started(row.id)
    ref = host.actor_ref
    coro = _distil(
        provider,
        host.services.settings.effective_summary_model,
        list(state.window.ledger),
        row,
        host.path,
    )
    future = host.system.io.submit(coro)
    future.add_done_callback(lambda f: ref.tell(_distilled(row.id, f)))


def transcript_distilled(host: BackgroundHost, done: TranscriptDistilled) -> None:
    state = host.state
    queue = host.services.stores.transcripts
    effects: list[Effect] = []
    if done.text is None or done.usage is None:
        status = queue.fail(done.row_id, done.error or "distillation failed")
        logger.warning("transcript %d for %s: %s (%s)", done.row_id, host.root, done.error, status)
    else:
        facts = attribute_facts(parse_fact_lines(done.text), state.window.known_hashes())
        store_learnt(host.services, host.root, facts)
        added, effects = state.learn(facts, time.monotonic())
        queue.done(done.row_id)
        cost = host.services.cost(done.usage)
        state.counters.add_usage(done.usage, cost)
        host.services.spend.record(host.root, done.usage, cost, question=False)
        logger.info("transcript %d for %s: %d new fact(s)", done.row_id, host.root, added)
    host.run([*effects, *state.distil_finished()])


# --- sharing knowledge ---------------------------------------------------------------
def export_facts(host: BackgroundHost, message: ExportLedger) -> None:
    resolve(
        message.reply,
        {
            "workspace": host.root,
            "repo": host.path.name,
            "facts": facts_as_json(known_facts(host.services, host.root, host.state.window.ledger)),
        },
    )


def describe(host: BackgroundHost, message: DescribeMemory) -> None:
    window, counters = host.state.window, host.state.counters
    facts = known_facts(host.services, host.root, host.state.window.ledger)
    fresh = [f.text for f in window.ledger if not f.stale]
    lines = [
        f"Live Memory knows {len(facts)} fact(s) and {len(window.files)} "
        f"file(s) of this workspace; {counters.questions_answered} question(s) answered."
    ]
    used = len(lines[0])
    for text in fresh:
        if used + len(text) + 3 > message.max_chars:
            break
        lines.append(f"- {text}")
        used += len(text) + 3
    summary = "\n".join(lines) if fresh or counters.questions_answered else None
    resolve(message.reply, {"summary": summary})


def write_insights(host: BackgroundHost) -> None:
    """Keep `<LIVE_MEMORY_INSIGHTS_ROOT>/<repo>/<category>.md` up to date."""
    root = host.services.settings.insights_root
    if root is None:
        return
    try:
        export_ledger(
            known_facts(host.services, host.root, host.state.window.ledger),
            root / host.path.name,
            repo_name=host.path.name,
        )
    except (LiveMemoryError, OSError, ValueError):
        logger.exception("could not write insights for %s", host.root)


def background_message(host: BackgroundHost, message: Any) -> bool:
    """Handle a background-work message; False when it is not one."""
    match message:
        case KeepWarmTick():
            keep_warm(host, message)
        case PingDone():
            ping_done(host, message)
        case TranscriptDistilled():
            transcript_distilled(host, message)
        case ExportLedger():
            export_facts(host, message)
        case ImportFacts():
            fact_import.start_import(host, message)
        case FactsMerged():
            fact_import.facts_merged(host, message)
        case DescribeMemory():
            describe(host, message)
        case _:
            return False
    return True
