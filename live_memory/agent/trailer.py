"""The answer trailer of ARCHITECTURE.md: one line of per-question accounting."""

from __future__ import annotations

from live_memory.providers import Usage

__all__ = ["format_cache", "format_cost", "format_trailer"]


def format_cost(cost_usd: float | None) -> str:
    return "n/a(subscription)" if cost_usd is None else f"${cost_usd:.4f}"


def format_cache(usage: Usage) -> str:
    """The prompt share served from the provider's cache, or `unknown` where the endpoint
    reported no cache figure (llama-cpp-python): never a made-up 0 %."""
    ratio = usage.cache_hit_ratio
    return "unknown" if ratio is None else f"{100 * ratio:.0f}%"


def format_trailer(
    *,
    model: str,
    latency_s: float,
    usage: Usage,
    tool_calls: int,
    files_read: int,
    cost_usd: float | None,
    context_pct: float,
    timed_out: bool = False,
    truncated: bool = False,
    sources: int = 0,
) -> str:
    """`---\\n[live-memory] model=… latency=… tokens=…(in/out) tool_calls=… …`.

    `truncated`: the answer stopped at its output cap (finish_reason `length`); `sources`:
    how many files and line ranges the answer rests on (the result's structured part)."""
    line = (
        f"[live-memory] model={model} latency={latency_s:.2f}s "
        f"tokens={usage.input_tokens}/{usage.output_tokens}(in/out) "
        f"tool_calls={tool_calls} files_read={files_read} cost={format_cost(cost_usd)} "
        f"context={context_pct:.0f}% cache={format_cache(usage)} sources={sources}"
    )
    if truncated:
        line += " truncated=true"
    if timed_out:
        line += " timed_out=true"
    return f"---\n{line}"
