"""Provider knowledge for keeping a prompt cache warm: how long it lives, how often to ping.

| endpoint                         | cache lifetime            | keep-warm interval      |
|----------------------------------|---------------------------|-------------------------|
| Anthropic API                    | 5 min, or 1 h if chosen   | 240 s                   |
| Anthropic via Bedrock / gateway  | 5 min                     | 240 s                   |
| OpenAI (in-memory retention)     | ~5-10 min                 | 240 s                   |
| OpenAI with 24 h retention       | up to 24 h                | 6 h (never, in effect)  |
| DeepSeek (disk cache)            | hours to days             | 6 h (never, in effect)  |
| other OpenAI-compatible servers  | like OpenAI               | 240 s                   |

"Never, in effect": the interval outlives keep-warm's max idle (30 min by default), so the loop
never pings; the cache outlives the session anyway. An explicit LIVE_MEMORY_KEEP_WARM_INTERVAL_S
always wins.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from live_memory.config import constants
from live_memory.config.settings import Settings
from live_memory.providers.endpoint import (
    EndpointKind,
    endpoint_kind,
    prompt_cache_retention_for,
    supports_1h_cache_ttl,
)
from live_memory.providers.types import CacheTtl

__all__ = [
    "CachePolicy",
    "cache_policy_for",
    "cache_policy_for_settings",
    "keep_warm_interval_for",
]

logger = logging.getLogger(__name__)

_ANTHROPIC_KINDS: frozenset[EndpointKind] = frozenset(
    {"anthropic", "anthropic_gateway", "bedrock_mantle", "bedrock_runtime", "vertex"}
)


@dataclass(frozen=True, slots=True)
class CachePolicy:
    """What the provider's prompt cache does, as far as keeping it warm is concerned."""

    kind: EndpointKind
    ttl_options: tuple[CacheTtl, ...]
    """TTLs we may ask for: ("5m", "1h") on Anthropic's API, ("5m",) elsewhere on Anthropic,
    () where the provider decides alone (OpenAI-compatible)."""
    lifetime_s: float
    """How long an untouched cache lives with the shortest (or only) TTL."""
    keep_warm_interval_s: float
    max_idle_s: float
    """Keep-warm stops this long after the last question."""
    prompt_cache_retention: str | None = None
    """OpenAI `prompt_cache_retention` to send, when any."""

    def lifetime_for(self, ttl: CacheTtl | None) -> float:
        """Lifetime of a cache written with `ttl` (None: the provider's default)."""
        if ttl == "1h" and "1h" in self.ttl_options:
            return constants.CACHE_TTL_1H_S
        return self.lifetime_s


def keep_warm_interval_for(
    provider: str, base_url: str | None, model: str, override: float | None = None
) -> float:
    """Seconds between keep-warm pings: `override` when set, else the provider's default."""
    if override is not None:
        return override
    kind = endpoint_kind(provider, base_url, model)
    if kind == "deepseek":
        return constants.KEEP_WARM_INTERVAL_DEEPSEEK_S
    if kind in _ANTHROPIC_KINDS:
        return constants.KEEP_WARM_INTERVAL_ANTHROPIC_S
    if prompt_cache_retention_for(base_url, model) is not None:
        return constants.KEEP_WARM_INTERVAL_EXTENDED_S
    return constants.KEEP_WARM_INTERVAL_OPENAI_S


def cache_policy_for(
    provider: str,
    base_url: str | None,
    model: str,
    *,
    interval_override: float | None = None,
    max_idle_s: float = constants.DEFAULT_KEEP_WARM_MAX_IDLE_S,
) -> CachePolicy:
    """The cache policy of `model` behind `provider` at `base_url`."""
    kind = endpoint_kind(provider, base_url, model)
    interval = keep_warm_interval_for(provider, base_url, model, interval_override)
    retention = None
    ttls: tuple[CacheTtl, ...] = ()
    if kind in _ANTHROPIC_KINDS:
        ttls = ("5m", "1h") if supports_1h_cache_ttl(kind) else ("5m",)
        lifetime = constants.CACHE_TTL_5M_S
    elif kind == "deepseek":
        lifetime = constants.DEEPSEEK_CACHE_LIFETIME_S
    else:
        retention = prompt_cache_retention_for(base_url, model)
        lifetime = (
            constants.OPENAI_EXTENDED_CACHE_LIFETIME_S
            if retention
            else constants.OPENAI_CACHE_LIFETIME_S
        )
    return CachePolicy(kind, ttls, lifetime, interval, max_idle_s, retention)


def cache_policy_for_settings(settings: Settings) -> CachePolicy:
    """`cache_policy_for` the configured provider, model and keep-warm settings."""
    return cache_policy_for(
        settings.provider or constants.PROVIDER_ANTHROPIC,
        settings.base_url,
        settings.model,
        interval_override=settings.keep_warm_interval_s,
        max_idle_s=settings.keep_warm_max_idle_s,
    )
