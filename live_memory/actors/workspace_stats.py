"""Per-workspace counters and the `/stats` document (field names fixed by ARCHITECTURE.md)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from live_memory.agent.prompt import SYSTEM_PROMPT
from live_memory.agent.question import QuestionOutcome
from live_memory.agent.services import Services
from live_memory.memory.commit import CommitOutcome
from live_memory.memory.layout import PrefixSizes, prefix_chars, stable_prefix_text
from live_memory.providers import min_cacheable_tokens
from live_memory.providers.types import Usage

if TYPE_CHECKING:
    from live_memory.actors.workspace import WorkspaceActor

__all__ = ["WorkspaceCounters", "prefix_tokens", "workspace_stats"]


@dataclass(slots=True)
class WorkspaceCounters:
    """Cumulative accounting, persisted in the snapshot."""

    questions_answered: int = 0
    timed_out: int = 0
    failures: int = 0
    cost_usd: float = 0.0
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    commits: dict[str, int] = field(
        default_factory=lambda: {"linear": 0, "race_adopted": 0, "race_dropped": 0}
    )
    last_question_at: float | None = None
    keep_warm_pings: int = 0
    keep_warm_cost_usd: float = 0.0
    last_ping_at: float | None = None

    def add_usage(self, usage: Usage, cost: float | None) -> None:
        self.input += usage.input_tokens
        self.output += usage.output_tokens
        self.cache_read += usage.cache_read_tokens
        self.cache_write += usage.cache_write_tokens
        self.cost_usd += cost or 0.0

    def record(self, outcome: QuestionOutcome, decision: CommitOutcome, services: Services) -> None:
        self.questions_answered += 1
        self.timed_out += int(outcome.loop.timed_out)
        self.commits[decision] = self.commits.get(decision, 0) + 1
        self.add_usage(outcome.loop.usage + outcome.summary_usage, outcome.cost_usd)
        self.last_question_at = time.time()

    def record_ping(self, usage: Usage, cost: float | None) -> None:
        self.add_usage(usage, cost)
        self.keep_warm_pings += 1
        self.keep_warm_cost_usd += cost or 0.0
        self.last_ping_at = time.time()

    def to_state(self) -> dict[str, object]:
        return asdict(self)

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> WorkspaceCounters:
        known = {k: v for k, v in state.items() if k in cls.__dataclass_fields__}
        counters = cls(**known)
        counters.commits = {**cls().commits, **counters.commits}
        return counters


def workspace_stats(actor: WorkspaceActor) -> dict[str, object]:
    window, counters, services = actor.window, actor.counters, actor.services
    settings = services.settings
    used = window.estimated_tokens()
    max_tokens = services.max_context_tokens
    prompt = counters.input
    return {
        "workspace": actor.root,
        "provider": settings.provider,
        "model": settings.model,
        "endpoint": services.provider.endpoint if services.provider else None,
        "context": {
            "used_tokens": used,
            "max_tokens": max_tokens,
            "fill_pct": round(100.0 * used / max(max_tokens, 1), 1),
        },
        "messages_retained": window.qa_turns,
        "file_contexts": dict(window.counts()),
        "ledger_facts": len(window.ledger),
        "ledger_stale_facts": sum(1 for f in window.ledger if f.stale),
        "compactions": window.compactions,
        "last_compaction_at": window.last_compaction_at,
        "summaries_written": window.summaries_written,
        "questions_answered": counters.questions_answered,
        "timed_out": counters.timed_out,
        "failures": counters.failures,
        "cost_usd": None if settings.subscription else round(counters.cost_usd, 6),
        "tokens": {
            "input": counters.input,
            "output": counters.output,
            "cache_read": counters.cache_read,
            "cache_write": counters.cache_write,
        },
        "cache_hit_ratio": round(counters.cache_read / prompt, 4) if prompt else 0.0,
        "queue": {"pending": len(actor.pending), "in_flight": len(actor.in_flight)},
        "version": actor.version,
        "commits": dict(counters.commits),
        "uptime_s": round(time.time() - actor.info.started_at, 1),
        "prefix": _prefix_cacheability(actor),
        "budget": services.spend.report(actor.root),
        "cache_economics": _cache_report(actor),
        "transcripts": services.stores.transcripts.counts(actor.root),
        "keep_warm": {
            "pings": counters.keep_warm_pings,
            "cost_usd": round(counters.keep_warm_cost_usd, 6),
            "last_ping_at": counters.last_ping_at,
        },
    }


def prefix_tokens(actor: WorkspaceActor) -> PrefixSizes:
    """Estimated tokens of the prompt through each cache breakpoint, tools included."""
    window = actor.window
    stable_text = stable_prefix_text(SYSTEM_PROMPT, window.tree)
    return prefix_chars(window, actor.toolbox.specs(), stable_text).in_tokens(
        window.chars_per_token
    )


def _prefix_cacheability(actor: WorkspaceActor) -> dict[str, object]:
    """Which breakpoints are long enough to cache: below the model's minimum a provider
    silently never caches a prefix, so no marker is placed there."""
    sizes = prefix_tokens(actor)
    minimum = min_cacheable_tokens(actor.services.settings.model)
    return {
        "stable_tokens": sizes.stable,
        "through_frozen_block_tokens": sizes.through_frozen,
        "through_history_tokens": sizes.through_history,
        "min_cacheable_tokens": minimum,
        "stable_cacheable": sizes.stable >= minimum,
        "frozen_cacheable": sizes.through_frozen >= minimum,
        "history_cacheable": sizes.through_history >= minimum,
    }


def _cache_report(actor: WorkspaceActor) -> dict[str, object]:
    """The prompt-cache policy and its last decision, with the reason."""
    policy, last = actor.services.cache_policy, actor.cache_decision
    return {
        "ttl": policy.ttl,
        "breakpoints": last.breakpoints if last else None,
        "reason": last.reason if last else "no request decided yet",
        "cache_lifetime_s": policy.lifetime_s,
        "keep_warm_interval_s": policy.keep_warm_interval_s,
        "keep_warm_can_fire": policy.pings_needed,
    }
