"""Which cache TTL to ask for and when a keep-warm ping is due: fixed rules, plain numbers.

| endpoint                         | TTL asked for | cache lifetime | keep-warm interval      |
|----------------------------------|---------------|----------------|-------------------------|
| Anthropic API                    | 1 h           | 1 h            | 59 min (never, in effect) |
| Anthropic via Bedrock / gateway  | 5 min         | 5 min          | 240 s                   |
| OpenAI (in-memory retention)     | provider's    | ~5-10 min      | 240 s                   |
| OpenAI with 24 h retention       | provider's    | up to 24 h     | ~24 h (never, in effect)|
| DeepSeek (disk cache)            | provider's    | hours to days  | ~6 h (never, in effect) |
| other OpenAI-compatible servers  | provider's    | like OpenAI    | 240 s                   |
| a local server (llama.cpp, ...)  | -             | its KV cache   | off                     |

The design's rule: ping the cached prefix a margin before it would expire, while the workspace
was asked something within max idle (30 min by default). "Never, in effect": the interval
outlives max idle, so the cache outlives the session anyway. An explicit
LIVE_MEMORY_KEEP_WARM_INTERVAL_S always wins.

Why the longest TTL and no forecasting: `bench/cache_ttl_bench.py` priced a simulated week of
four question patterns. Always asking for 1 h on Anthropic's API halves the input bill against
5 min with or without pings; a controller that forecast the next gap from a gap history to choose
the TTL and to decide each ping saved only 3-9 % more on Anthropic's API and lost about 2 % on
5-minute-only endpoints, for about 550 lines of per-workspace state. The rules here are the
ones that paid.

A local server (llama.cpp, Ollama, vLLM, LM Studio on this machine or the local network) keeps
its KV cache until another prompt replaces it, not for a TTL: a ping would only spend the user's
CPU re-reading the prompt, so keep-warm is off there whatever the settings say.
"""

from __future__ import annotations

from dataclasses import dataclass

from live_memory.config import constants as C
from live_memory.providers import (
    CacheTtl,
    endpoint_kind,
    is_local_endpoint,
    prompt_cache_retention_for,
    supports_1h_cache_ttl,
)

__all__ = ["CacheDecision", "CachePolicy", "cache_policy_for", "decide", "ping_due"]

_ANTHROPIC_KINDS = frozenset(
    {"anthropic", "anthropic_gateway", "bedrock_mantle", "bedrock_runtime", "vertex"}
)


@dataclass(frozen=True, slots=True)
class CachePolicy:
    """What one endpoint's prompt cache does, reduced to the numbers the rules need."""

    ttl: CacheTtl | None
    """`cache_control` TTL to send ("1h" on Anthropic's API, "5m" elsewhere on Anthropic);
    None where the provider decides alone (OpenAI-compatible)."""
    lifetime_s: float
    """How long an untouched cache lives with that TTL."""
    keep_warm_interval_s: float
    """Seconds between pings: an explicit setting, else a margin under the lifetime."""
    max_idle_s: float
    """Keep-warm stops this long after the last question."""
    local: bool = False
    """A local server's KV cache: nothing expires, keep-warm never pings."""

    @classmethod
    def of(
        cls,
        *,
        ttl: CacheTtl | None,
        lifetime_s: float,
        max_idle_s: float,
        interval_override: float | None = None,
        local: bool = False,
    ) -> CachePolicy:
        interval = interval_override
        if interval is None:
            interval = max(lifetime_s - C.KEEP_WARM_MARGIN_S, C.KEEP_WARM_MIN_TICK_S)
        return cls(ttl, lifetime_s, interval, max_idle_s, local)

    @property
    def pings_needed(self) -> bool:
        """Whether a ping can ever fall due (the cache dies before keep-warm's max idle)."""
        return not self.local and self.keep_warm_interval_s < self.max_idle_s

    @property
    def keep_warm_off_reason(self) -> str | None:
        """Why keep-warm never pings this endpoint whatever the settings, or None."""
        if self.local:
            return (
                "local server: its KV cache lasts until another prompt replaces it, so a ping "
                "would only re-read the prompt on your hardware; keep-warm is off"
            )
        return None


def cache_policy_for(
    provider: str,
    base_url: str | None,
    model: str,
    *,
    interval_override: float | None = None,
    max_idle_s: float = C.DEFAULT_KEEP_WARM_MAX_IDLE_S,
) -> CachePolicy:
    """The policy for `model` behind `provider` (`anthropic` / `openai`) at `base_url`."""
    kind = endpoint_kind(provider, base_url, model)
    ttl: CacheTtl | None = None
    local = is_local_endpoint(provider, base_url)
    if local:
        lifetime = C.LOCAL_CACHE_LIFETIME_S
    elif kind in _ANTHROPIC_KINDS:
        ttl = "1h" if supports_1h_cache_ttl(kind) else "5m"
        lifetime = C.CACHE_TTL_1H_S if ttl == "1h" else C.CACHE_TTL_5M_S
    elif kind == "deepseek":
        lifetime = C.DEEPSEEK_CACHE_LIFETIME_S
    elif prompt_cache_retention_for(base_url, model) is not None:
        lifetime = C.OPENAI_EXTENDED_CACHE_LIFETIME_S
    else:
        lifetime = C.OPENAI_CACHE_LIFETIME_S
    return CachePolicy.of(
        ttl=ttl,
        lifetime_s=lifetime,
        max_idle_s=max_idle_s,
        interval_override=interval_override,
        local=local,
    )


@dataclass(frozen=True, slots=True)
class CacheDecision:
    """What to do with the prompt cache for the next request."""

    ttl: CacheTtl | None
    breakpoints: bool
    """False when even the whole cacheable prompt is below the model's minimum cacheable size:
    the provider caches nothing, so there is no TTL to pay for and nothing to keep warm."""
    min_breakpoint_tokens: int
    """Place a breakpoint only where the prompt through it reaches this size."""
    reason: str


def decide(policy: CachePolicy, prefix_tokens: int, min_cacheable_tokens: int) -> CacheDecision:
    """The decision for a request whose cacheable prompt is `prefix_tokens` long."""
    if prefix_tokens < min_cacheable_tokens:
        why = (
            f"the prompt ({prefix_tokens:,} tokens) is below the model's minimum cacheable size "
            f"({min_cacheable_tokens:,}): no breakpoint, nothing to keep warm"
        )
        return CacheDecision(policy.ttl, False, min_cacheable_tokens, why)
    ttl = policy.ttl or "the provider's default"
    why = f"ttl {ttl}: the longest this endpoint is known to accept"
    return CacheDecision(policy.ttl, True, min_cacheable_tokens, why)


def ping_due(
    *,
    now: float,
    last_question_at: float | None,
    last_touch: float,
    interval_s: float,
    max_idle_s: float,
) -> bool:
    """The design's eligibility rule: asked within max idle, untouched for the interval.

    Times are seconds on one clock (monotonic in the server). The caller also checks what only
    it knows: a non-empty window, no question in flight, the budget not paused.
    """
    if last_question_at is None or now - last_question_at > max_idle_s:
        return False
    return now - last_touch >= interval_s
