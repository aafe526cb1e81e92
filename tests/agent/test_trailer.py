"""The answer trailer: one exact line of per-question accounting after a `---` rule."""

from __future__ import annotations

import re

from live_memory.agent.trailer import format_cache, format_cost, format_trailer
from live_memory.providers.types import Usage

PATTERN = re.compile(
    r"---\n\[live-memory\] model=\S+ latency=\d+\.\d{2}s tokens=\d+/\d+\(in/out\) "
    r"tool_calls=\d+ files_read=\d+ cost=(\$\d+\.\d{4}|n/a\(subscription\)) context=\d+% "
    r"cache=(\d+%|unknown) sources=\d+( truncated=true)?( timed_out=true)?"
)


def test_trailer_has_the_exact_documented_format() -> None:
    text = format_trailer(
        model="claude-haiku-4-5",
        latency_s=3.14159,
        usage=Usage(input_tokens=12345, output_tokens=678, cache_read_tokens=9000),
        tool_calls=4,
        files_read=3,
        cost_usd=0.0123456,
        context_pct=41.6,
        sources=5,
    )
    assert text == (
        "---\n[live-memory] model=claude-haiku-4-5 latency=3.14s tokens=12345/678(in/out) "
        "tool_calls=4 files_read=3 cost=$0.0123 context=42% cache=73% sources=5"
    )
    assert PATTERN.fullmatch(text)


def test_unmetered_cost_reads_as_subscription() -> None:
    text = format_trailer(
        model="m",
        latency_s=0.0,
        usage=Usage(),
        tool_calls=0,
        files_read=0,
        cost_usd=None,
        context_pct=0.0,
    )
    assert text == (
        "---\n[live-memory] model=m latency=0.00s tokens=0/0(in/out) tool_calls=0 files_read=0 "
        "cost=n/a(subscription) context=0% cache=0% sources=0"
    )
    assert PATTERN.fullmatch(text)


def test_a_timed_out_answer_says_so_at_the_end_of_the_line() -> None:
    text = format_trailer(
        model="m",
        latency_s=60.5,
        usage=Usage(1, 2),
        tool_calls=1,
        files_read=1,
        cost_usd=0.0,
        context_pct=99.6,
        timed_out=True,
    )
    assert text.endswith("cost=$0.0000 context=100% cache=0% sources=0 timed_out=true")
    assert PATTERN.match(text)
    assert text.count("\n") == 1


def test_cost_formatting() -> None:
    assert format_cost(None) == "n/a(subscription)"
    assert format_cost(0) == "$0.0000"
    assert format_cost(1.23456) == "$1.2346"


def test_cache_reuse_nobody_reported_reads_unknown_not_zero() -> None:
    # llama-cpp-python reports no cached-token field: 86 % may have been reused.
    usage = Usage(input_tokens=2827, output_tokens=27, cache_unreported_tokens=2827)
    text = format_trailer(
        model="m",
        latency_s=1.0,
        usage=usage,
        tool_calls=0,
        files_read=0,
        cost_usd=0.0,
        context_pct=9.0,
    )
    assert text.endswith("context=9% cache=unknown sources=0")
    assert PATTERN.fullmatch(text)


def test_partly_reported_reuse_counts_only_the_reported_calls() -> None:
    usage = Usage(1000, 10, cache_read_tokens=900) + Usage(500, 5, cache_unreported_tokens=500)
    assert format_cache(usage) == "90%"


def test_an_answer_cut_at_its_output_cap_says_truncated() -> None:
    text = format_trailer(
        model="m",
        latency_s=1.0,
        usage=Usage(100, 256),
        tool_calls=0,
        files_read=0,
        cost_usd=0.0,
        context_pct=1.0,
        truncated=True,
        timed_out=True,
    )
    assert text.endswith("cache=0% sources=0 truncated=true timed_out=true")
    assert PATTERN.fullmatch(text)
