"""Per-workspace cumulative accounting, persisted in the snapshot."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from live_memory.agent import FACTS_SOURCE, STALE_MARK, QuestionOutcome, activity
from live_memory.config import constants as C
from live_memory.memory import CommitOutcome
from live_memory.providers import Usage

__all__ = ["WorkspaceCounters"]


@dataclass(slots=True)
class WorkspaceCounters:
    questions_answered: int = 0
    timed_out: int = 0
    failures: int = 0
    cost_usd: float = 0.0
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cache_unreported: int = 0
    """Prompt tokens of calls whose endpoint reported no cache figure (reuse unknown)."""
    commits: dict[str, int] = field(
        default_factory=lambda: {"linear": 0, "race_adopted": 0, "race_dropped": 0}
    )
    last_question_at: float | None = None
    keep_warm_pings: int = 0
    keep_warm_cost_usd: float = 0.0
    last_ping_at: float | None = None
    recent_questions: list[dict[str, object]] = field(default_factory=list)
    """The last DASHBOARD_RECENT_QUESTIONS questions' trailer figures (the dashboard's)."""
    compaction_log: list[dict[str, object]] = field(default_factory=list)
    """The last DASHBOARD_COMPACTION_LOG compactions that landed (the dashboard's timeline)."""
    recall: dict[str, int] = field(
        default_factory=lambda: {
            "searches": 0,
            "hits": 0,
            "matched": 0,
            "appended": 0,
            "appended_stale": 0,
        }
    )
    """Retrieval per question: store searches, searches that matched a fact, facts matched,
    facts appended as a retrieval delta (and of those, marked possibly out of date)."""

    def add_usage(self, usage: Usage, cost: float | None) -> None:
        self.input += usage.input_tokens
        self.output += usage.output_tokens
        self.cache_read += usage.cache_read_tokens
        self.cache_write += usage.cache_write_tokens
        self.cache_unreported += usage.cache_unreported_tokens
        self.cost_usd += cost or 0.0

    @property
    def cache_hit_ratio(self) -> float | str:
        """Cached share of the prompt tokens whose cache use was reported, or "unknown" when
        the endpoint never reported any (llama-cpp-python): 0.0 would claim no reuse."""
        ratio = Usage(
            self.input,
            cache_read_tokens=self.cache_read,
            cache_unreported_tokens=self.cache_unreported,
        ).cache_hit_ratio
        return "unknown" if ratio is None else round(ratio, 4)

    def record(self, outcome: QuestionOutcome, decision: CommitOutcome) -> None:
        self.questions_answered += 1
        self.timed_out += int(outcome.loop.timed_out)
        self.commits[decision] = self.commits.get(decision, 0) + 1
        self.add_usage(outcome.loop.usage + outcome.summary_usage, outcome.cost_usd)
        self._record_retrieval(outcome)
        self.last_question_at = time.time()
        activity.append_bounded(
            self.recent_questions,
            activity.question_record(outcome, decision, self.last_question_at),
            C.DASHBOARD_RECENT_QUESTIONS,
        )
        if outcome.compacted and decision != "race_dropped":
            activity.append_bounded(
                self.compaction_log, activity.compaction_record(outcome), C.DASHBOARD_COMPACTION_LOG
            )

    def _record_retrieval(self, outcome: QuestionOutcome) -> None:
        recall = self.recall
        for part in outcome.retrieval.asked:
            if part.source == FACTS_SOURCE:
                recall["searches"] += 1
                recall["hits"] += int(part.matched > 0)
                recall["matched"] += part.matched
        for part in outcome.retrieval.parts:
            if part.source == FACTS_SOURCE:
                recall["appended"] += len(part.lines)
                recall["appended_stale"] += sum(STALE_MARK in line for line in part.lines)

    def record_ping(self, usage: Usage, cost: float | None) -> None:
        self.add_usage(usage, cost)
        self.keep_warm_pings += 1
        self.keep_warm_cost_usd += cost or 0.0
        self.last_ping_at = time.time()

    def to_state(self) -> dict[str, object]:
        # Built by hand, not dataclasses.asdict: asdict deep-copies recursively and this runs
        # for every snapshot (~1.7 ms of a question's CPU on a loaded machine). The records
        # are flat JSON dicts, so one level of copying keeps the snapshot apart from later
        # changes.
        state: dict[str, object] = {name: getattr(self, name) for name in _FIELDS}
        state["commits"] = dict(self.commits)
        state["recall"] = dict(self.recall)
        state["recent_questions"] = [dict(r) for r in self.recent_questions]
        state["compaction_log"] = [dict(r) for r in self.compaction_log]
        return state

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> WorkspaceCounters:
        known = {k: v for k, v in state.items() if k in cls.__dataclass_fields__}
        counters = cls(**known)
        counters.commits = {**cls().commits, **counters.commits}
        counters.recall = {**cls().recall, **counters.recall}
        counters.recent_questions = activity.records_from_state(
            counters.recent_questions, C.DASHBOARD_RECENT_QUESTIONS
        )
        counters.compaction_log = activity.records_from_state(
            counters.compaction_log, C.DASHBOARD_COMPACTION_LOG
        )
        return counters


_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(WorkspaceCounters))
