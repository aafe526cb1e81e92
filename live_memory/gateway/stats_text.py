"""The human table `/stats?format=text` and the slash command print."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["render_stats_text"]


def render_stats_text(stats: Mapping[str, Any]) -> str:
    ctx, files, tokens = stats["context"], stats["file_contexts"], stats["tokens"]
    queue, commits = stats["queue"], stats["commits"]
    cost = stats["cost_usd"]
    rows = [
        ("workspace", stats["workspace"]),
        ("model", f"{stats['provider']} / {stats['model']}"),
        ("endpoint", stats["endpoint"] or "-"),
        ("context", f"{ctx['used_tokens']:,} / {ctx['max_tokens']:,} tokens ({ctx['fill_pct']}%)"),
        ("messages retained", stats["messages_retained"]),
        (
            "file contexts",
            f"{files['loaded']} loaded, {files['with_content']} with content, "
            f"{files['stale']} stale, {files['deleted']} deleted",
        ),
        ("ledger", f"{stats['ledger_facts']} facts ({stats['ledger_stale_facts']} possibly stale)"),
        (
            "compactions",
            f"{stats['compactions']} (summaries written: {stats['summaries_written']})",
        ),
        ("questions", f"{stats['questions_answered']} answered, {stats['timed_out']} timed out"),
        ("cost", "n/a(subscription)" if cost is None else f"${cost:.4f}"),
        (
            "tokens",
            f"in {tokens['input']:,} / out {tokens['output']:,} / cache read "
            f"{tokens['cache_read']:,} / cache write {tokens['cache_write']:,}",
        ),
        ("cache hit ratio", _ratio(stats["cache_hit_ratio"])),
        ("queue", f"{queue['pending']} pending, {queue['in_flight']} in flight"),
        (
            "commits",
            f"v{stats['version']}: {commits['linear']} linear, {commits['race_adopted']} race "
            f"adopted, {commits['race_dropped']} race dropped",
        ),
        ("uptime", f"{stats['uptime_s']:.0f} s"),
    ]
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k.ljust(width)}  {v}" for k, v in rows) + "\n"


def _ratio(value: object) -> str:
    # "unknown" where the endpoint reports no cached tokens (llama-cpp-python).
    return f"{100 * value:.1f}%" if isinstance(value, int | float) else str(value)
