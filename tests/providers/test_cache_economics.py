"""The per-workspace cache controller: TTL choice, keep-warm pings, breakpoints, accounting."""

from __future__ import annotations

import asyncio

import pytest

from live_memory.providers import (
    CacheEconomics,
    CachePolicy,
    ChatRequest,
    Message,
    OpenAIProvider,
    SystemBlock,
    TextBlock,
    Usage,
    cache_policy_for,
    price_for,
)
from live_memory.testing import FakeProvider

HAIKU = price_for("claude-haiku-4-5")
ANTHROPIC = cache_policy_for("anthropic", None, "claude-haiku-4-5")
GATEWAY = cache_policy_for("anthropic", "https://gateway.example", "claude-haiku-4-5")
PREFIX = 30_000
START = 1_000_000.0


def session(gaps_min: list[float], policy: CachePolicy = ANTHROPIC) -> tuple[CacheEconomics, float]:
    """Questions separated by these gaps, each reading the prefix (the first writes it).

    Returns the controller and the time of the last cache touch."""
    economics = CacheEconomics(HAIKU, policy)
    at = START
    economics.observe_question(at)
    economics.observe_usage(at + 5, Usage(PREFIX + 500, 100, 0, PREFIX + 500), "5m")
    for gap in gaps_min:
        at += gap * 60
        economics.observe_question(at)
        economics.observe_usage(at + 5, Usage(PREFIX + 500, 100, PREFIX, 500), "5m")
    return economics, at + 5


def test_a_prefix_below_the_models_minimum_gets_no_breakpoint_and_no_keep_warm() -> None:
    economics, touched = session([1, 2])

    decision = economics.decide(touched + 241, prefix_tokens=3000)

    assert (decision.breakpoints, decision.keep_warm) == (False, False)
    assert "minimum cacheable size (4,096)" in decision.reason
    assert economics.allows_breakpoint(4096)
    assert not economics.allows_breakpoint(4095)


def test_short_gaps_keep_the_5_minute_ttl() -> None:
    economics, touched = session([1, 2, 1, 3, 2])

    decision = economics.decide(touched + 60, PREFIX)

    assert decision.ttl == "5m"
    assert "0 of the last 5 gaps were 5-60 min" in decision.ttl_reason


def test_one_gap_over_5_minutes_is_not_yet_a_pattern() -> None:
    economics, touched = session([2, 20, 2])

    assert economics.decide(touched + 60, PREFIX).ttl == "5m"


def test_recurring_gaps_between_5_minutes_and_an_hour_choose_the_1_hour_ttl() -> None:
    economics, touched = session([2, 20, 2, 25, 3])

    decision = economics.decide(touched + 60, PREFIX)

    assert decision.ttl == "1h"
    assert "2 of the last 5 gaps were 5-60 min" in decision.ttl_reason


def test_a_warm_cache_moves_to_1_hour_for_the_price_of_its_tail() -> None:
    economics, touched = session([20, 25, *[180] * 10])

    decision = economics.decide(touched + 60, PREFIX)

    assert decision.ttl == "1h"
    assert "with the cache warm" in decision.ttl_reason


def test_a_cold_cache_pays_the_1_hour_premium_only_when_mid_gaps_dominate() -> None:
    mostly_long, touched = session([20, 25, *[180] * 10])
    mostly_mid, touched_mid = session([20, 25, 15, 30, 180])

    cold = mostly_long.decide(touched + 400, PREFIX)

    assert cold.ttl == "5m"
    assert "with the cache cold" in cold.ttl_reason
    assert mostly_mid.decide(touched_mid + 400, PREFIX).ttl == "1h"


def test_endpoints_without_the_1_hour_ttl_stay_at_5_minutes() -> None:
    economics, touched = session([20, 25, 30], GATEWAY)

    decision = economics.decide(touched + 60, PREFIX)

    assert decision.ttl == "5m"
    assert "anthropic_gateway" in decision.ttl_reason


def test_openai_style_endpoints_get_no_ttl() -> None:
    policy = cache_policy_for("openai", None, "gpt-5-mini")
    economics = CacheEconomics(price_for("gpt-5-mini"), policy)

    assert economics.decide(START, PREFIX).ttl is None


def test_keep_warm_pings_when_the_next_question_is_likely_before_max_idle() -> None:
    economics, touched = session([8, 10, 12, 9, 7], GATEWAY)

    decision = economics.decide(touched + 241, PREFIX)

    assert decision.keep_warm
    assert "pinging costs" in decision.keep_warm_reason


def test_keep_warm_waits_while_the_cache_is_still_warm() -> None:
    economics, touched = session([8, 10, 12, 9, 7], GATEWAY)

    decision = economics.decide(touched + 30, PREFIX)

    assert not decision.keep_warm
    assert "stays warm" in decision.keep_warm_reason


def test_keep_warm_stops_past_max_idle() -> None:
    economics, touched = session([8, 10, 12, 9, 7], GATEWAY)

    decision = economics.decide(touched + 1900, PREFIX)

    assert not decision.keep_warm
    assert "max idle" in decision.keep_warm_reason


def test_keep_warm_stops_once_idle_longer_than_every_recent_gap() -> None:
    economics, touched = session([2, 3, 2, 3], GATEWAY)

    decision = economics.decide(touched + 241, PREFIX)

    assert not decision.keep_warm
    assert "longer than every recent gap" in decision.keep_warm_reason


def test_keep_warm_is_refused_when_the_next_question_likely_comes_after_max_idle() -> None:
    economics, touched = session([60, 70, 65], GATEWAY)

    decision = economics.decide(touched + 241, PREFIX)

    assert not decision.keep_warm
    assert "pinging costs" in decision.keep_warm_reason


def test_no_ping_before_enough_gaps_are_known_to_forecast() -> None:
    economics, touched = session([], GATEWAY)

    decision = economics.decide(touched + 241, PREFIX)

    assert not decision.keep_warm
    assert "0 gaps between questions seen, 1 needed" in decision.keep_warm_reason


def test_a_1_hour_cache_needs_no_ping_for_the_whole_max_idle() -> None:
    economics, touched = session([2, 20, 2, 25, 3])
    economics.observe_usage(touched, Usage(PREFIX, 1, PREFIX, 0), "1h")

    decision = economics.decide(touched + 600, PREFIX)

    assert decision.ttl == "1h"
    assert not decision.keep_warm
    assert "stays warm another 50 min" in decision.keep_warm_reason


def test_deepseek_never_needs_pings() -> None:
    policy = cache_policy_for("openai", "https://api.deepseek.com", "deepseek-chat")
    economics = CacheEconomics(price_for("deepseek-chat"), policy)
    economics.observe_question(START)
    economics.observe_usage(START + 1, Usage(PREFIX, 10, PREFIX - 64, 0), None)

    decision = economics.decide(START + 241, PREFIX)

    assert not decision.keep_warm
    assert "never needed" in decision.keep_warm_reason


def test_report_accounts_cache_tokens_and_dollars_and_explains_the_choice() -> None:
    economics, touched = session([2, 20, 2, 25])
    economics.observe_usage(touched + 241, Usage(PREFIX + 64, 1, PREFIX, 0), "5m", ping=True)
    economics.decide(touched + 300, PREFIX)

    report = economics.report()

    reads, writes = 5 * PREFIX, PREFIX + 500 + 4 * 500
    assert report["tokens"] == {"cache_read": reads, "cache_write": writes, "cache_write_1h": 0}
    usd = report["usd"]
    assert isinstance(usd, dict)
    assert usd["cache_read"] == pytest.approx(reads * 0.10 / 1e6, abs=1e-6)
    assert usd["cache_write"] == pytest.approx(writes * 1.25 / 1e6, abs=1e-6)
    assert usd["saved_vs_uncached"] > 0
    assert report["pings"] == 1
    assert report["gaps"] == {"observed": 4, "under_5m": 2, "5m_to_1h": 2, "over_1h": 0}
    assert report["ttl"] == "1h"
    assert str(report["reason"]).startswith("ttl 1h: 2 of the last 4 gaps")
    tail = report["tail_tokens"]
    assert isinstance(tail, int)
    assert tail < 1500  # learnt from the 500-token tails


def test_deepseek_usage_fields_are_accounted_like_the_others() -> None:
    policy = cache_policy_for("openai", "https://api.deepseek.com", "deepseek-chat")
    economics = CacheEconomics(price_for("deepseek-chat"), policy)
    tree = SystemBlock("Tree:\n" + "src/pkg/module.py\n" * 200)
    request = ChatRequest("deepseek-chat", (tree,), (Message("user", (TextBlock("q"),)),), (), 16)

    with FakeProvider(deepseek_usage=True) as deepseek:
        provider = OpenAIProvider(deepseek.openai_base_url, "k")

        async def twice() -> list[Usage]:
            try:
                return [(await provider.chat(request)).usage for _ in range(2)]
            finally:
                await provider.aclose()

        usages = asyncio.run(twice())
    for at, usage in enumerate(usages):
        economics.observe_usage(START + at, usage, None)

    report = economics.report()
    reads = usages[1].cache_read_tokens
    assert reads > 0
    assert report["tokens"] == {"cache_read": reads, "cache_write": 0, "cache_write_1h": 0}
    usd = report["usd"]
    assert isinstance(usd, dict)
    assert usd["cache_read"] == pytest.approx(reads * 0.028 / 1e6, abs=1e-6)


def test_a_hot_swap_keeps_the_learnt_gaps_and_starts_the_new_cache_cold() -> None:
    economics, touched = session([20, 25, 15, 30, 3])

    economics.retarget(price_for("claude-sonnet-4-5"), ANTHROPIC)
    decision = economics.decide(touched + 60, PREFIX)

    assert decision.ttl == "1h"  # the 5-60 min gaps still dominate a cold start
    assert "with the cache cold" in decision.ttl_reason
    assert economics.report()["priced_as"] == "claude-sonnet-4-5"
