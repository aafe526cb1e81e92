"""Bounded records of a workspace's recent questions and compactions, for the dashboard.

Plain JSON-ready dicts (they ride in the snapshot's counters), each list capped by a named
constant. A question is kept as a redacted preview with its trailer figures, never its answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from live_memory.config import constants as C
from live_memory.hygiene import redact_secrets

if TYPE_CHECKING:
    from live_memory.agent.question import QuestionOutcome

__all__ = ["append_bounded", "compaction_record", "question_record", "records_from_state"]

Record = dict[str, object]


def question_preview(text: str) -> str:
    """A question as the dashboard may show it: secrets redacted, then cut short."""
    redacted, _ = redact_secrets(text[: C.DASHBOARD_QUESTION_PREVIEW_CHARS * 4])
    flat = " ".join(redacted.split())
    limit = C.DASHBOARD_QUESTION_PREVIEW_CHARS
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _last_question(outcome: QuestionOutcome) -> str:
    for turn in reversed(outcome.window.history):
        if turn.kind == "question":
            return turn.text
    return ""


def question_record(outcome: QuestionOutcome, commit: str, at: float) -> Record:
    """One answered question's trailer figures (and how its window was committed)."""
    loop, usage = outcome.loop, outcome.loop.usage
    return {
        "at": at,
        "question": question_preview(_last_question(outcome)),
        "model": loop.model,
        "latency_s": round(outcome.latency_s, 3),
        "input": usage.input_tokens,
        "output": usage.output_tokens,
        "cache_read": usage.cache_read_tokens,
        "cache_write": usage.cache_write_tokens,
        "tool_calls": loop.tool_calls,
        "files_read": loop.files_read,
        "cost_usd": None if outcome.cost_usd is None else round(outcome.cost_usd, 6),
        "context_pct": round(outcome.context_pct, 1),
        "timed_out": loop.timed_out,
        "compacted": outcome.compacted,
        "commit": commit,
    }


def compaction_record(outcome: QuestionOutcome) -> Record:
    """A compaction that landed with a committed question: when, and what was left."""
    window = outcome.window
    return {
        "at": window.last_compaction_at,
        "number": window.compactions,
        "tokens_after": window.estimated_tokens(),
        "summaries_written": window.summaries_written,
        "summary_tokens": outcome.summary_usage.input_tokens + outcome.summary_usage.output_tokens,
    }


def append_bounded(log: list[Record], item: Record, cap: int) -> None:
    log.append(item)
    del log[:-cap]


def records_from_state(value: object, cap: int) -> list[Record]:
    """A persisted record list, tolerating old or malformed snapshots (dropped, not fatal)."""
    if not isinstance(value, list):
        return []
    return [dict(item) for item in value[-cap:] if isinstance(item, Mapping)]
