"""One question from admission to finished window: compact if needed, loop, record."""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field

from live_memory.agent.compactor import (
    CORE_MAP_HEADING,
    CompactionReport,
    CoreMap,
    compact_window,
)
from live_memory.agent.grounding import with_unverified_note
from live_memory.agent.loop import LoopLimits, LoopResult, run_agent_loop
from live_memory.agent.progress import QuestionProgress
from live_memory.agent.prompt import SYSTEM_PROMPT
from live_memory.agent.retrieval import Retrieval, Retriever, append_retrieval, retrieve_all
from live_memory.agent.services import Services
from live_memory.agent.sources import Source, answer_sources, sources_note
from live_memory.agent.trailer import format_trailer
from live_memory.config import constants as C
from live_memory.errors import PromptTooLong
from live_memory.memory import (
    RETRIEVAL_KIND,
    DistillGate,
    Hints,
    Window,
    render_trailing_turn,
)
from live_memory.providers import CacheTtl, Usage
from live_memory.tools import Toolbox

__all__ = [
    "QuestionJob",
    "QuestionOutcome",
    "answer_question",
    "clamp_answer_tokens",
    "retrieve_for_job",
]

logger = logging.getLogger(__name__)


def clamp_answer_tokens(requested: int | None, default: int) -> int:
    """0 or None → the server default; otherwise clamped to [MIN, MAX]_ANSWER_TOKENS."""
    value = requested or default
    return max(C.MIN_ANSWER_TOKENS, min(value, C.MAX_ANSWER_TOKENS_CAP))


@dataclass(frozen=True, slots=True)
class QuestionJob:
    question: str
    window: Window
    """A private copy; the job mutates it into the window it will commit."""
    recently_modified: tuple[str, ...]
    soft_deadline: float
    max_answer_tokens: int
    workspace_key: str
    gate: DistillGate | None = None
    cache_ttl: CacheTtl | None = None
    cache_min_tokens: int = 0
    """A cache breakpoint only where the prompt through it reaches this size."""
    retrievers: tuple[Retriever, ...] = ()
    """Asked once before the first model call; their lines become the retrieval delta."""
    retrieved: Retrieval | None = None
    """What `retrievers` answered already, on `window` as it is given (the workspace asks
    them before it starts the job: a hand-off to a worker thread and back, about 1 ms a
    question, saved); asked again when a compaction changed the window."""
    core_map: CoreMap | None = None
    """Rendered after the directory tree when a compaction rebuilds the stable prefix."""
    index_grounded: bool = False
    """The structural index covers the workspace and its core map is in the window's stable
    prefix (see `index_covers`): the memory is not cold, whatever the question names."""
    progress: QuestionProgress | None = None
    """The asker's progress board (MCP progress notifications), if it asked for one."""


@dataclass(slots=True)
class QuestionOutcome:
    window: Window
    loop: LoopResult
    answer_text: str
    trailer: str
    latency_s: float
    cost_usd: float | None
    context_pct: float
    compacted: bool
    summary_usage: Usage
    retrieval: Retrieval = field(default_factory=Retrieval)
    """What the question's retrieval delta asked and appended (counted by /stats)."""
    sources: tuple[Source, ...] = ()
    """The files and lines the answer rests on, checked when it was given."""

    @property
    def exploration(self) -> tuple[int, int]:
        """The race tiebreak: files read, then tokens."""
        return (self.loop.files_read, self.loop.usage.input_tokens + self.loop.usage.output_tokens)


def context_pct(window: Window, services: Services) -> float:
    return 100.0 * window.estimated_tokens() / max(services.max_context_tokens, 1)


async def answer_question(
    job: QuestionJob, services: Services, toolbox: Toolbox
) -> QuestionOutcome:
    """Answer `job.question`. Raises ProviderError / NoProviderConfigured on failure."""
    started = time.monotonic()
    provider = services.require_provider()
    window = job.window
    if job.progress is not None:
        job.progress.stage("preparing the prompt")
    report = CompactionReport()
    compacted = await compact_window(
        window, services, gate=job.gate, report=report, core_map=job.core_map
    )
    retrieval = await retrieve_for_job(job, window, job.retrieved if not compacted else None)
    deadline = _deadline(job, window, services, started)
    remaining = max(deadline - started, 0.0)
    turn = render_trailing_turn(
        job.question, Hints(remaining, job.max_answer_tokens, job.recently_modified)
    )
    limits = LoopLimits(
        soft_deadline=deadline,
        max_answer_tokens=job.max_answer_tokens,
        tool_result_token_budget=services.tool_budget_tokens,
        cold_guard=services.settings.force_explore_when_cold,
        cache_ttl=job.cache_ttl,
        cache_min_tokens=job.cache_min_tokens,
        grounded=retrieval.grounds or job.index_grounded,
        forced_tool=services.forced_tool,  # what this endpoint was seen to do, if anything
        local=services.local,
    )

    async def attempt() -> LoopResult:
        return await run_agent_loop(
            provider,
            window,
            turn,
            toolbox=toolbox,
            model=services.model,
            system_prompt=SYSTEM_PROMPT,
            limits=limits,
            cache_key=job.workspace_key,
            progress=job.progress,
        )

    try:
        result = await attempt()
    except PromptTooLong:
        logger.warning("prompt too long for %s; compacting and retrying once", window.root)
        compacted = (
            await compact_window(
                window, services, gate=job.gate, force=True, report=report, core_map=job.core_map
            )
            or compacted
        )
        retrieval = await retrieve_for_job(job, window)  # the forced freeze dropped the delta
        result = await attempt()

    if result.forced_tool_ignored:  # remembered: the next question grounds without forcing
        await asyncio.to_thread(services.note_forced_tool_ignored)
    speed = services.speed  # learnt per endpoint: the next question's budget follows it
    for timings in result.timings:
        speed.observe_call(timings)
    speed.observe_question(result.iterations)
    for read in result.reads:
        window.record_read(read.path, read.sha256, read.size)
    if result.written:  # only the model's words: a notice of ours, copied, turns into answers
        window.append_qa(job.question, result.written)
    sources = await asyncio.to_thread(
        answer_sources,
        result.written,
        result.spans,
        window.files,
        toolbox.line_count,
        indexed=_indexed(window),
    )
    notes = [result.checked, sources_note(sources, unseen_too=not result.unverified)]
    answer = "\n\n".join([result.answer, *(n for n in notes if n)])
    answer = with_unverified_note(answer) if result.unverified else answer
    latency = time.monotonic() - started
    cost = services.cost(result.usage + report.usage)
    pct = context_pct(window, services)
    trailer = format_trailer(
        model=result.model,
        latency_s=latency,
        usage=result.usage,
        tool_calls=result.tool_calls,
        files_read=result.files_read,
        cost_usd=cost,
        context_pct=pct,
        timed_out=result.timed_out,
        truncated=result.stop_reason == "max_tokens",
        sources=len(sources),
    )
    return QuestionOutcome(
        window,
        result,
        answer,
        trailer,
        latency,
        cost,
        pct,
        compacted,
        report.usage,
        retrieval,
        tuple(sources),
    )


def _deadline(job: QuestionJob, window: Window, services: Services, started: float) -> float:
    """The soft deadline planned from the prompt about to be sent (a local server's measured
    speeds), within the latest the asker waits for (`job.soft_deadline`)."""
    prompt = window.estimated_tokens() + int(len(SYSTEM_PROMPT) / window.chars_per_token)
    budget = services.budget(job.max_answer_tokens, prompt)
    return min(job.soft_deadline, started + budget.seconds)


def _indexed(window: Window) -> str:
    """The structural index's lines in the prompt (the core map, the retrieval deltas): a
    file they locate (`path:line`) was seen, though never read."""
    core = window.tree.partition(CORE_MAP_HEADING)[2]
    return "\n".join([core, *(t.text for t in window.history if t.kind == RETRIEVAL_KIND)])


async def retrieve_for_job(
    job: QuestionJob, window: Window, retrieved: Retrieval | None = None
) -> Retrieval:
    """Append `retrieved`'s delta, or ask the retrievers (in a worker thread: store
    queries) and append theirs."""
    if retrieved is not None:
        retrieval = retrieved
    elif not job.retrievers:
        return Retrieval()
    else:
        retrieval = await asyncio.to_thread(retrieve_all, job.retrievers, job.question, window)
    append_retrieval(window, retrieval)
    return retrieval
