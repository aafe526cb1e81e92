"""Per-workspace counters and the `/stats` document (field names fixed by ARCHITECTURE.md)."""

from __future__ import annotations

import time
from typing import Protocol

from live_memory.actors.knowledge_stats import knowledge_stats
from live_memory.agent import SYSTEM_PROMPT, Services
from live_memory.index import WorkspaceIndex
from live_memory.memory import PrefixSizes, Window, prefix_chars, stable_prefix_text
from live_memory.prompt_cache import CacheDecision
from live_memory.providers import min_cacheable_tokens
from live_memory.tools import Toolbox
from live_memory.workspace import WorkspaceCounters, WorkspaceState

__all__ = ["StatsHost", "WorkspaceCounters", "prefix_tokens", "workspace_stats"]


class StatsHost(Protocol):
    """What the stats read from a workspace shell (kept structural: no import cycle)."""

    root: str
    state: WorkspaceState
    services: Services
    started_at: float
    cache_decision: CacheDecision | None
    symbols: WorkspaceIndex | None


def workspace_stats(actor: StatsHost) -> dict[str, object]:
    state, services = actor.state, actor.services
    window, counters = state.window, state.counters
    settings = services.settings
    max_tokens = services.max_context_tokens
    used = window.next_prompt_tokens(max_tokens)
    coverage = actor.symbols.coverage().as_dict() if actor.symbols else None
    knowledge = knowledge_stats(actor.root, state, services) | {"index": coverage}
    return {
        "workspace": actor.root,
        "provider": settings.provider,
        "model": settings.model,
        "endpoint": services.provider.endpoint if services.provider else None,
        "context": {
            "used_tokens": used,
            "max_tokens": max_tokens,
            "fill_pct": round(100.0 * used / max(max_tokens, 1), 1),
            "source": services.context_source,
        },
        "endpoint_facts": services.endpoint_report(),
        "messages_retained": window.qa_turns,
        "file_contexts": dict(window.counts()),
        "freshness": state.freshness_stats(),
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
            "cache_unreported": counters.cache_unreported,
        },
        "cache_hit_ratio": counters.cache_hit_ratio,
        "queue": {"pending": len(state.pending), "in_flight": len(state.in_flight)},
        "version": state.version,
        "commits": dict(counters.commits),
        "uptime_s": round(time.time() - actor.started_at, 1),
        "prefix": _prefix_cacheability(actor),
        "symbol_index": coverage,
        "budget": services.spend.report(actor.root),
        "cache_economics": _cache_report(actor),
        "transcripts": services.stores.transcripts.counts(actor.root),
        "knowledge": knowledge,
        "keep_warm": {
            "pings": counters.keep_warm_pings,
            "cost_usd": round(counters.keep_warm_cost_usd, 6),
            "last_ping_at": counters.last_ping_at,
        },
    }


def prefix_tokens(window: Window) -> PrefixSizes:
    """Estimated tokens of the prompt through each cache breakpoint, tools included."""
    stable_text = stable_prefix_text(SYSTEM_PROMPT, window.tree)
    return prefix_chars(window, Toolbox.specs(), stable_text).in_tokens(window.chars_per_token)


def _prefix_cacheability(actor: StatsHost) -> dict[str, object]:
    """Which breakpoints are long enough to cache: below the model's minimum a provider
    silently never caches a prefix, so no marker is placed there."""
    sizes = prefix_tokens(actor.state.window)
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


def _cache_report(actor: StatsHost) -> dict[str, object]:
    """The prompt-cache policy and its last decision, with the reason."""
    policy, last = actor.services.cache_policy, actor.cache_decision
    return {
        "ttl": policy.ttl,
        "breakpoints": last.breakpoints if last else None,
        "reason": last.reason if last else "no request decided yet",
        "cache_lifetime_s": policy.lifetime_s,
        "keep_warm_interval_s": policy.keep_warm_interval_s,
        "keep_warm_can_fire": policy.pings_needed,
        "keep_warm_off_reason": policy.keep_warm_off_reason,
    }
