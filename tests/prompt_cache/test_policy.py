"""The prompt-cache rules: the longest TTL each endpoint accepts, pings a margin before expiry."""

from __future__ import annotations

import pytest

from live_memory.prompt_cache import cache_policy_for, decide, ping_due

HAIKU = "claude-haiku-4-5"
MANTLE = "https://bedrock-mantle.us-east-1.api.aws/anthropic"


DAY, SIX_HOURS = 24 * 3600.0, 6 * 3600.0


@pytest.mark.parametrize(
    ("endpoint", "ttl", "lifetime", "interval"),
    [
        (("anthropic", None, HAIKU), "1h", 3600.0, 3540.0),
        (("anthropic", "https://gw.example", HAIKU), "5m", 300.0, 240.0),
        (("anthropic", MANTLE, "claude"), "5m", 300.0, 240.0),
        (("openai", None, "gpt-5-mini"), None, 300.0, 240.0),
        (("openai", "https://llm.example/v1", "qwen3-coder"), None, 300.0, 240.0),
        (("openai", "https://api.openai.com/v1", "gpt-5.1"), None, DAY, DAY - 60),
        (("openai", "https://api.deepseek.com", "deepseek-chat"), None, SIX_HOURS, SIX_HOURS - 60),
        (("openai", "https://or.example/v1", "deepseek/deepseek-chat"), None, SIX_HOURS, 21540),
    ],
)
def test_each_endpoint_gets_its_longest_ttl_and_a_ping_a_minute_before_expiry(
    endpoint: tuple[str, str | None, str], ttl: str | None, lifetime: float, interval: float
) -> None:
    policy = cache_policy_for(*endpoint)

    assert (policy.ttl, policy.lifetime_s, policy.keep_warm_interval_s) == (ttl, lifetime, interval)


def test_pings_are_needed_only_where_the_cache_dies_before_max_idle() -> None:
    assert cache_policy_for("anthropic", "https://gw.example", HAIKU).pings_needed
    assert not cache_policy_for("anthropic", None, HAIKU).pings_needed  # 1 h outlives 30 min
    assert not cache_policy_for("openai", "https://api.deepseek.com", "deepseek-chat").pings_needed


def test_an_explicit_interval_and_max_idle_always_win() -> None:
    deepseek = ("openai", "https://api.deepseek.com", "deepseek-chat")

    policy = cache_policy_for(*deepseek, interval_override=90.0, max_idle_s=600)

    assert (policy.keep_warm_interval_s, policy.max_idle_s, policy.pings_needed) == (90, 600, True)


def test_a_prompt_below_the_minimum_gets_no_breakpoint() -> None:
    policy = cache_policy_for("anthropic", None, HAIKU)

    small, large = decide(policy, 4095, 4096), decide(policy, 4096, 4096)

    assert (small.breakpoints, small.min_breakpoint_tokens) == (False, 4096)
    assert "below the model's minimum cacheable size (4,096)" in small.reason
    assert (large.breakpoints, large.ttl) == (True, "1h")


@pytest.mark.parametrize(
    ("now", "last_question_at", "last_touch", "due"),
    [
        (1000.0, None, 0.0, False),  # never asked: nothing worth keeping
        (1000.0, 900.0, 900.0, False),  # touched 100 s ago, interval 240 s
        (1000.0, 700.0, 760.0, True),  # touched 240 s ago, asked 300 s ago
        (3000.0, 1000.0, 2700.0, False),  # asked 2000 s ago: past max idle (1800 s)
        (2800.0, 1000.0, 2500.0, True),  # asked exactly max idle ago: still eligible
    ],
)
def test_ping_due_follows_the_designs_fixed_interval_rule(
    now: float, last_question_at: float | None, last_touch: float, due: bool
) -> None:
    assert (
        ping_due(
            now=now,
            last_question_at=last_question_at,
            last_touch=last_touch,
            interval_s=240.0,
            max_idle_s=1800.0,
        )
        is due
    )


@pytest.mark.parametrize(
    "base_url",
    ["http://localhost:8080/v1", "http://127.0.0.1:11434/v1", "http://192.168.1.20:1234/v1"],
)
def test_a_local_server_is_never_kept_warm(base_url: str) -> None:
    # Its KV cache has no TTL: a ping would only re-read the prompt on the user's hardware.
    policy = cache_policy_for("openai", base_url, "qwen2.5-coder", interval_override=60.0)
    assert policy.local
    assert not policy.pings_needed
    assert policy.keep_warm_off_reason is not None and "local server" in policy.keep_warm_off_reason


def test_a_remote_compatible_server_is_not_local() -> None:
    policy = cache_policy_for("openai", "https://llm.example/v1", "qwen2.5-coder")
    assert not policy.local and policy.keep_warm_off_reason is None
