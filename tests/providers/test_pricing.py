from __future__ import annotations

import pytest

from live_memory.config.settings import Settings
from live_memory.providers import (
    Usage,
    context_tokens_for,
    cost_usd,
    min_cacheable_tokens,
    price_for,
)
from live_memory.providers.pricing import pricing_checked


def test_table_is_dated() -> None:
    assert pricing_checked() == "2026-11-30"


@pytest.mark.parametrize(
    ("model", "key"),
    [
        ("claude-haiku-4-5", "claude-haiku-4-5"),
        ("claude-haiku-4-5-20251001", "claude-haiku-4-5"),
        ("anthropic/claude-haiku-4.5", "claude-haiku-4-5"),
        ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5"),
        ("claude-opus-4-20250514", "claude-opus-4"),
        ("gpt-5-mini", "gpt-5-mini"),
        ("gpt-5", "gpt-5"),
        ("gpt-5.6-luna", "gpt-5-6-luna"),
        ("GPT-4o-mini-2024-07-18", "gpt-4o-mini"),
        ("deepseek-chat", "deepseek-chat"),
    ],
)
def test_model_names_match_the_longest_table_key_they_contain(model: str, key: str) -> None:
    pricing = price_for(model)

    assert pricing.model == key
    assert pricing.source == "table"


def test_known_prices_and_limits() -> None:
    haiku = price_for("claude-haiku-4-5")
    assert (
        haiku.input,
        haiku.output,
        haiku.cache_write_5m,
        haiku.cache_write_1h,
        haiku.cache_read,
    ) == (
        1.0,
        5.0,
        1.25,
        2.0,
        0.10,
    )
    assert context_tokens_for("claude-haiku-4-5") == 200_000
    assert min_cacheable_tokens("claude-haiku-4-5") == 4096
    assert min_cacheable_tokens("claude-sonnet-4-5") == 1024
    assert min_cacheable_tokens("gpt-5-mini") == 1024
    assert min_cacheable_tokens("deepseek-chat") == 64


def test_unknown_model_costs_nothing_and_has_defaults() -> None:
    pricing = price_for("qwen3-coder-30b")

    assert pricing.source == "unknown"
    assert cost_usd(Usage(1_000_000, 1_000_000), pricing) == 0.0
    assert context_tokens_for("qwen3-coder-30b") is None
    assert min_cacheable_tokens("qwen3-coder-30b") == 1024


def test_cost_charges_uncached_reads_writes_and_output_at_their_rates() -> None:
    usage = Usage(
        input_tokens=10_000, output_tokens=500, cache_read_tokens=6_000, cache_write_tokens=2_000
    )
    haiku = price_for("claude-haiku-4-5")

    expected_5m = (2_000 * 1.0 + 6_000 * 0.10 + 2_000 * 1.25 + 500 * 5.0) / 1e6
    expected_1h = (2_000 * 1.0 + 6_000 * 0.10 + 2_000 * 2.0 + 500 * 5.0) / 1e6
    assert cost_usd(usage, haiku) == pytest.approx(expected_5m)
    assert cost_usd(usage, haiku, cache_ttl="1h") == pytest.approx(expected_1h)


def test_long_prompts_pay_the_long_prompt_rates_on_every_token() -> None:
    haiku55 = price_for("claude-haiku-5-5")

    short = cost_usd(Usage(input_tokens=100_000, output_tokens=1_000), haiku55)
    long = cost_usd(Usage(input_tokens=100_001, output_tokens=1_000), haiku55)

    assert short == pytest.approx((100_000 * 0.10 + 1_000 * 0.50) / 1e6)
    assert long == pytest.approx((100_001 * 0.50 + 1_000 * 2.50) / 1e6)


def test_overrides_need_both_prices_and_derive_cache_prices_from_input() -> None:
    only_input = price_for("claude-haiku-4-5", price_input=9.0)
    both = price_for("claude-haiku-4-5", price_input=2.0, price_output=8.0, cache_read_mult=0.5)

    assert only_input.source == "table"
    assert only_input.input == 1.0
    assert both.source == "override"
    assert (both.input, both.output) == (2.0, 8.0)
    assert both.cache_read == pytest.approx(1.0)
    assert both.cache_write_5m == pytest.approx(2.5)
    assert both.context_tokens == 200_000


def test_multipliers_apply_to_the_table_input_price() -> None:
    pricing = price_for("gpt-5-mini", cache_read_mult=0.5, cache_write_mult=2.0)

    assert pricing.cache_read == pytest.approx(0.125)
    assert pricing.cache_write_5m == pytest.approx(0.5)
    assert pricing.output == 2.0


def test_settings_defaults_keep_table_cache_prices() -> None:
    defaults = Settings()
    mults = {
        "cache_read_mult": defaults.price_cache_read_mult,
        "cache_write_mult": defaults.price_cache_write_mult,
    }
    default = price_for("gpt-4.1", **mults)
    custom = price_for("gpt-4.1", **{**mults, "cache_read_mult": 0.5})
    overridden = price_for("local", price_input=1.0, price_output=2.0, **mults)

    assert default.cache_read == 0.50  # gpt-4.1's own cached price: a quarter of input
    assert custom.cache_read == pytest.approx(1.0)
    assert overridden.source == "override"
    assert overridden.cache_read == pytest.approx(0.10)
    assert overridden.cache_write_5m == pytest.approx(1.25)
