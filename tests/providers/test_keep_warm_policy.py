"""Provider knowledge for keep-warm: intervals and cache lifetimes per endpoint."""

from __future__ import annotations

import pytest

from live_memory.config import Settings
from live_memory.providers import (
    cache_policy_for,
    cache_policy_for_settings,
    keep_warm_interval_for,
)


@pytest.mark.parametrize(
    ("provider", "base_url", "model", "interval"),
    [
        ("anthropic", None, "claude-haiku-4-5", 240.0),
        ("anthropic", "https://bedrock-mantle.us-east-1.api.aws/anthropic", "claude", 240.0),
        ("openai", None, "gpt-5-mini", 240.0),
        ("openai", "http://localhost:8080/v1", "qwen3-coder", 240.0),
        ("openai", "https://api.deepseek.com", "deepseek-chat", 6 * 3600.0),
        ("openai", "https://openrouter.ai/api/v1", "deepseek/deepseek-chat", 6 * 3600.0),
        ("openai", "https://api.openai.com/v1", "gpt-5.1", 6 * 3600.0),
    ],
)
def test_keep_warm_interval_is_provider_knowledge(
    provider: str, base_url: str | None, model: str, interval: float
) -> None:
    assert keep_warm_interval_for(provider, base_url, model) == interval


def test_an_explicit_interval_always_wins() -> None:
    assert keep_warm_interval_for("openai", "https://api.deepseek.com", "deepseek-chat", 90.0) == 90


def test_cache_policies_name_the_ttls_each_endpoint_may_use() -> None:
    anthropic = cache_policy_for("anthropic", None, "claude-haiku-4-5")
    gateway = cache_policy_for("anthropic", "https://gw.example", "claude-haiku-4-5")
    openai = cache_policy_for("openai", "https://api.openai.com/v1", "gpt-5.1")
    deepseek = cache_policy_for("openai", "https://api.deepseek.com", "deepseek-chat")

    assert (anthropic.ttl_options, anthropic.lifetime_for("1h")) == (("5m", "1h"), 3600.0)
    assert (gateway.ttl_options, gateway.lifetime_for("1h")) == (("5m",), 300.0)
    assert (openai.ttl_options, openai.prompt_cache_retention) == ((), "24h")
    assert openai.lifetime_for(None) == 24 * 3600.0
    assert deepseek.keep_warm_interval_s > deepseek.max_idle_s  # the loop never fires


def test_policy_follows_the_settings() -> None:
    settings = Settings(
        provider="anthropic",
        model="claude-haiku-4-5",
        keep_warm_interval_s=120.0,
        keep_warm_max_idle_s=600.0,
    )

    policy = cache_policy_for_settings(settings)

    assert (policy.kind, policy.keep_warm_interval_s, policy.max_idle_s) == (
        "anthropic",
        120.0,
        600.0,
    )
