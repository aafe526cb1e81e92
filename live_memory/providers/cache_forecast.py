"""What a prompt cache will cost over the question gaps a workspace has shown (pure arithmetic).

Prices are USD per token here (the table's per-million prices divided by a million). A gap is the
time between two questions; the prefix is what the cache holds (P tokens), the tail what each
question appends to it (T tokens, always written).

TTL (Anthropic), chosen per request: the request pays now for the prefix (a read when the cache
is warm, else a write at the TTL's price) and the tail (always written at the TTL's price); the
next question, after a gap drawn from the remembered gaps, reads the prefix if the gap fits in
the TTL, else re-writes it (priced at the 5-minute rate: that choice is the next request's):

    cost(ttl) = (P * read if warm else P * write[ttl]) + T * write[ttl]
              + mean over gaps g of  P * (read if g <= ttl else write[5m])

So a warm cache moves to 1 h for the price of its tail, while a cold one pays the 1-hour premium
on the whole prefix only when gaps of 5-60 minutes are the likely next gap.

Keep-warm: with the workspace idle for `idle` seconds, the next gap is one of the remembered
gaps longer than `idle` (equally likely). Pinging from now until that question (or until max
idle) costs one prefix read per ping; the question then reads the prefix if the last ping kept
it alive. Letting the cache go costs a re-write whenever the question comes after it expired.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass

from live_memory.config import constants
from live_memory.providers.pricing import Pricing
from live_memory.providers.types import CacheTtl

__all__ = ["KeepWarmForecast", "Rates", "keep_warm_forecast", "rates_for", "ttl_cost"]

logger = logging.getLogger(__name__)

_PER_TOKENS = 1_000_000


@dataclass(frozen=True, slots=True)
class Rates:
    """USD per token for one prompt size."""

    input: float
    read: float
    write_5m: float
    write_1h: float

    def write(self, ttl: CacheTtl | None) -> float:
        return self.write_1h if ttl == "1h" else self.write_5m


@dataclass(frozen=True, slots=True)
class KeepWarmForecast:
    """Expected USD until the next question, pinging from now on or letting the cache go."""

    ping_usd: float
    """Pings until the question (or max idle), plus reading or re-writing the prefix then."""
    stop_usd: float
    """Reading the prefix if the question comes before the cache expires, else re-writing it."""
    expected_wait_s: float
    """Mean time from now to the next question, over the gaps that are still possible."""


def rates_for(pricing: Pricing, prompt_tokens: int) -> Rates:
    """Per-token rates for a prompt of this size (long-prompt tiers apply)."""
    tier = pricing.for_prompt(prompt_tokens)
    return Rates(
        tier.input / _PER_TOKENS,
        tier.cache_read / _PER_TOKENS,
        tier.cache_write_5m / _PER_TOKENS,
        tier.cache_write_1h / _PER_TOKENS,
    )


def ttl_cost(
    gaps: Sequence[float],
    ttl: CacheTtl,
    rates: Rates,
    *,
    prefix_tokens: int,
    tail_tokens: float,
    warm: bool,
) -> float:
    """Expected USD of this request and the next one's prefix, with this TTL and no pings."""
    lifetime = constants.CACHE_TTL_1H_S if ttl == "1h" else constants.CACHE_TTL_5M_S
    write = rates.write(ttl)
    now = prefix_tokens * (rates.read if warm else write) + tail_tokens * write
    if not gaps:
        return now
    after = [prefix_tokens * (rates.read if g <= lifetime else rates.write_5m) for g in gaps]
    return now + sum(after) / len(gaps)


def keep_warm_forecast(
    *,
    gaps: Sequence[float],
    idle_s: float,
    expires_in_s: float,
    lifetime_s: float,
    interval_s: float,
    max_idle_s: float,
    rates: Rates,
    write: float,
    prefix_tokens: int,
) -> KeepWarmForecast | None:
    """The two expected costs, or None when no remembered gap is longer than `idle_s`.

    `expires_in_s`: how long the cache lives as it stands; `lifetime_s`: how long each ping
    keeps it (the TTL pings are sent with).
    """
    candidates = [gap for gap in gaps if gap > idle_s]
    if not candidates:
        return None
    # A ping is due when the cache would not outlive the next keep-warm tick; pings then come
    # every `step` seconds, each keeping the prefix for another lifetime.
    step = max(interval_s, lifetime_s - interval_s)
    ping_cost = prefix_tokens * rates.read + constants.KEEP_WARM_PING_OVERHEAD_TOKENS * rates.input
    expires_at = idle_s + expires_in_s  # in seconds after the last question
    ping_total = stop_total = 0.0
    for gap in candidates:
        end = min(gap, max_idle_s)
        pings = max(1, math.ceil((end - idle_s) / step))
        last_ping = idle_s + (pings - 1) * step
        ping_total += pings * ping_cost
        ping_total += prefix_tokens * (rates.read if gap <= last_ping + lifetime_s else write)
        stop_total += prefix_tokens * (rates.read if gap <= expires_at else write)
    count = len(candidates)
    wait = sum(gap - idle_s for gap in candidates) / count
    return KeepWarmForecast(ping_total / count, stop_total / count, wait)
