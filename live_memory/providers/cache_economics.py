"""The per-workspace prompt-cache controller: which TTL, whether to ping, whether to cache at all.

A plain state object (no threads, no clock: every time is passed in, epoch or monotonic seconds
alike). The workspace feeds it question arrivals and the usage of every provider call, and asks
it before each question and each keep-warm tick:

    economics.observe_question(now)
    decision = economics.decide(now, prefix_tokens)   # decision.ttl → ChatRequest.cache_ttl
    economics.observe_usage(later, response.usage, decision.ttl)

Rules (arithmetic in `cache_forecast`):
- **Breakpoints** only when the prefix reaches the model's minimum cacheable size; below it the
  provider caches nothing, so there is no TTL to pay for and nothing to keep warm.
- **TTL 1 h** (Anthropic's API only) once at least `CACHE_1H_MIN_MID_GAPS` of the last
  `CACHE_GAP_HISTORY` gaps between questions were longer than 5 minutes but at most an hour, and
  the expected cost of this request plus the next question's prefix is lower with 1 h than with
  5 min (`cache_forecast.ttl_cost`): a warm cache moves to 1 h for the price of its tail, a cold
  one pays the 1-hour premium on the whole prefix only when 5-60 minute gaps dominate. The TTL is
  chosen as if no pings were sent; keep-warm only fills the gaps the chosen TTL leaves open.
- **Keep-warm ping** only while idle no longer than max idle, when the cache would expire before
  the next tick, once `CACHE_MIN_GAPS_FOR_FORECAST` gaps are known, and when the expected cost
  of pinging until the next likely question is lower than letting it expire and re-writing the
  prefix then.
"""

from __future__ import annotations

import logging
from collections import deque
from dataclasses import dataclass

from live_memory.config import constants
from live_memory.config.settings import Settings
from live_memory.providers.cache_forecast import keep_warm_forecast, rates_for, ttl_cost
from live_memory.providers.keep_warm_policy import CachePolicy, cache_policy_for_settings
from live_memory.providers.pricing import Pricing, cost_usd, price_for_settings
from live_memory.providers.types import CacheTtl, Usage

__all__ = ["CacheDecision", "CacheEconomics", "cache_economics_for"]

logger = logging.getLogger(__name__)

_PER_TOKENS = 1_000_000


@dataclass(frozen=True, slots=True)
class CacheDecision:
    """What to do with the prompt cache for the next request."""

    ttl: CacheTtl | None
    """`cache_control` TTL for the breakpoints (None: the provider decides, OpenAI-style)."""
    breakpoints: bool
    """False when even the whole cacheable prompt is below the model's minimum cacheable size."""
    min_breakpoint_tokens: int
    """Place a breakpoint only where the prompt through it reaches this size (the minimum)."""
    keep_warm: bool
    """Whether a keep-warm ping now is worth its cost."""
    reason: str
    ttl_reason: str = ""
    keep_warm_reason: str = ""


class CacheEconomics:
    """One workspace's cache controller and cache accounting."""

    def __init__(
        self,
        pricing: Pricing,
        policy: CachePolicy,
        *,
        history: int = constants.CACHE_GAP_HISTORY,
    ) -> None:
        self.pricing = pricing
        self.policy = policy
        self._gaps: deque[float] = deque(maxlen=history)
        self._last_question: float | None = None
        self._last_touch: float | None = None
        self._touch_ttl: CacheTtl | None = None
        self._tail_tokens = float(constants.DEFAULT_CACHE_TAIL_TOKENS)
        self._question_writes = 0  # cache writes since the last question arrived
        self._question_warm = False
        self._last: CacheDecision | None = None
        self._prefix_tokens = 0
        self._reads = self._writes = self._writes_1h = 0
        self._read_usd = self._write_usd = self._saved_usd = 0.0
        self._pings = 0
        self._ping_usd = 0.0

    def retarget(self, pricing: Pricing, policy: CachePolicy) -> None:
        """Switch model or provider (a hot swap), keeping the question gaps learnt so far.

        The new provider's cache starts cold; the accounting carries on.
        """
        self.pricing, self.policy = pricing, policy
        self._last_touch = None
        self._touch_ttl = None

    # --- observations ------------------------------------------------------------------------

    def observe_question(self, at: float) -> None:
        """A question arrived at `at`."""
        if self._last_question is not None:
            self._gaps.append(max(0.0, at - self._last_question))
            if self._question_warm:  # a cold question's writes are the whole prefix, not a tail
                alpha = constants.CACHE_TAIL_EMA_ALPHA
                self._tail_tokens += alpha * (self._question_writes - self._tail_tokens)
        self._last_question = at
        self._question_writes = 0
        self._question_warm = False

    def observe_usage(
        self, at: float, usage: Usage, ttl: CacheTtl | None, *, ping: bool = False
    ) -> None:
        """One provider call ended at `at` (a question's call, or a keep-warm ping)."""
        if usage.cache_read_tokens or usage.cache_write_tokens:
            self._last_touch = at
            self._touch_ttl = ttl
        rates = rates_for(self.pricing, usage.input_tokens)
        write_rate = rates.write(ttl)
        self._reads += usage.cache_read_tokens
        self._writes += usage.cache_write_tokens
        if ttl == "1h":
            self._writes_1h += usage.cache_write_tokens
        self._read_usd += usage.cache_read_tokens * rates.read
        self._write_usd += usage.cache_write_tokens * write_rate
        self._saved_usd += usage.cache_read_tokens * (rates.input - rates.read)
        self._saved_usd -= usage.cache_write_tokens * (write_rate - rates.input)
        if ping:
            self._pings += 1
            self._ping_usd += cost_usd(usage, self.pricing, cache_ttl=ttl or "5m")
        else:
            self._question_writes += usage.cache_write_tokens
            self._question_warm = self._question_warm or usage.cache_read_tokens > 0

    # --- decisions ---------------------------------------------------------------------------

    def allows_breakpoint(self, prefix_tokens: int) -> bool:
        """Whether a breakpoint after `prefix_tokens` tokens can cache anything."""
        return prefix_tokens >= self.pricing.min_cacheable_tokens

    def decide(self, now: float, prefix_tokens: int) -> CacheDecision:
        """The cache decision for a request sent at `now` whose cacheable prompt (everything
        before the trailing turn: what a breakpoint can cover, and what a ping keeps warm) is
        `prefix_tokens` long."""
        self._prefix_tokens = prefix_tokens
        minimum = self.pricing.min_cacheable_tokens
        if not self.allows_breakpoint(prefix_tokens):
            why = (
                f"the prompt ({prefix_tokens:,} tokens) is below {self.pricing.model}'s minimum "
                f"cacheable size ({minimum:,}): no breakpoint, nothing to keep warm"
            )
            ttl = self.policy.ttl_options[0] if self.policy.ttl_options else None
            decision = CacheDecision(ttl, False, minimum, False, why, why, why)
        else:
            ttl, ttl_why = self._choose_ttl(now, prefix_tokens)
            warm, warm_why = self._keep_warm(now, prefix_tokens, ttl)
            reason = f"ttl {ttl or 'provider default'}: {ttl_why}; keep-warm: {warm_why}"
            decision = CacheDecision(ttl, True, minimum, warm, reason, ttl_why, warm_why)
        self._last = decision
        return decision

    def _choose_ttl(self, now: float, prefix_tokens: int) -> tuple[CacheTtl | None, str]:
        options = self.policy.ttl_options
        if not options:
            return None, f"{self.policy.kind} manages its cache lifetime itself"
        if "1h" not in options:
            return "5m", f"only the 5-minute TTL is known to work on {self.policy.kind}"
        gaps = list(self._gaps)
        mid = sum(1 for g in gaps if constants.CACHE_TTL_5M_S < g <= constants.CACHE_TTL_1H_S)
        needed = constants.CACHE_1H_MIN_MID_GAPS
        if mid < needed:
            return "5m", f"{mid} of the last {len(gaps)} gaps were 5-60 min (1 h needs {needed})"
        rates = rates_for(self.pricing, prefix_tokens)
        warm = self._is_warm(now)
        costs = {
            ttl: ttl_cost(
                gaps,
                ttl,
                rates,
                prefix_tokens=prefix_tokens,
                tail_tokens=self._tail_tokens,
                warm=warm,
            )
            for ttl in ("5m", "1h")
        }
        five, hour = costs["5m"], costs["1h"]
        summary = (
            f"{mid} of the last {len(gaps)} gaps were 5-60 min; with the cache "
            f"{'warm' if warm else 'cold'}, this request and the next prefix cost "
            f"${hour:.4f} at 1 h, ${five:.4f} at 5 min"
        )
        return ("1h", summary) if hour < five else ("5m", summary)

    def _is_warm(self, now: float) -> bool:
        if self._last_touch is None:
            return False
        return now - self._last_touch < self.policy.lifetime_for(self._touch_ttl)

    def _keep_warm(self, now: float, prefix_tokens: int, ttl: CacheTtl | None) -> tuple[bool, str]:
        policy = self.policy
        if self._last_question is None or self._last_touch is None:
            return False, "nothing cached yet"
        if policy.keep_warm_interval_s >= policy.max_idle_s:
            return False, (
                f"the {policy.kind} cache outlives keep-warm's max idle "
                f"({_span(policy.max_idle_s)}); pings are never needed"
            )
        idle = now - self._last_question
        if idle > policy.max_idle_s:
            return False, f"idle {_span(idle)}, past max idle ({_span(policy.max_idle_s)})"
        lifetime = policy.lifetime_for(self._touch_ttl)
        touched = now - self._last_touch
        if touched >= lifetime:
            return False, "the cache has expired already; a ping would re-write it"
        if lifetime - touched > policy.keep_warm_interval_s:
            return False, f"the cache stays warm another {_span(lifetime - touched)}"
        known = len(self._gaps)
        if known < constants.CACHE_MIN_GAPS_FOR_FORECAST:
            # No evidence yet: the next question may come in a minute or tomorrow, and pinging
            # for nothing costs up to max idle / interval prefix reads. Learn first.
            return False, (
                f"{known} gaps between questions seen, "
                f"{constants.CACHE_MIN_GAPS_FOR_FORECAST} needed to forecast the next one"
            )
        rates = rates_for(self.pricing, prefix_tokens)
        forecast = keep_warm_forecast(
            gaps=list(self._gaps),
            idle_s=idle,
            expires_in_s=lifetime - touched,
            lifetime_s=policy.lifetime_for(ttl),
            interval_s=policy.keep_warm_interval_s,
            max_idle_s=policy.max_idle_s,
            rates=rates,
            write=rates.write(ttl),
            prefix_tokens=prefix_tokens,
        )
        if forecast is None:
            return False, f"idle {_span(idle)}, longer than every recent gap between questions"
        summary = (
            f"next question expected in ~{_span(forecast.expected_wait_s)}: pinging costs "
            f"${forecast.ping_usd:.4f}, letting it expire ${forecast.stop_usd:.4f}"
        )
        return forecast.ping_usd < forecast.stop_usd, summary

    # --- reporting ---------------------------------------------------------------------------

    def report(self) -> dict[str, object]:
        """Cache reads/writes in tokens and dollars, and the last decision with its reasons."""
        gaps = list(self._gaps)
        short = sum(1 for g in gaps if g <= constants.CACHE_TTL_5M_S)
        long = sum(1 for g in gaps if g > constants.CACHE_TTL_1H_S)
        last = self._last
        return {
            "ttl": last.ttl if last else None,
            "breakpoints": last.breakpoints if last else None,
            "keep_warm": last.keep_warm if last else None,
            "reason": last.reason if last else "no request decided yet",
            "ttl_reason": last.ttl_reason if last else "",
            "keep_warm_reason": last.keep_warm_reason if last else "",
            "endpoint_kind": self.policy.kind,
            "prefix_tokens": self._prefix_tokens,
            "min_cacheable_tokens": self.pricing.min_cacheable_tokens,
            "tail_tokens": round(self._tail_tokens),
            "gaps": {
                "observed": len(gaps),
                "under_5m": short,
                "5m_to_1h": len(gaps) - short - long,
                "over_1h": long,
            },
            "tokens": {
                "cache_read": self._reads,
                "cache_write": self._writes,
                "cache_write_1h": self._writes_1h,
            },
            "usd": {
                "cache_read": round(self._read_usd, 6),
                "cache_write": round(self._write_usd, 6),
                "saved_vs_uncached": round(self._saved_usd, 6),
                "pings": round(self._ping_usd, 6),
            },
            "pings": self._pings,
            "priced_as": self.pricing.model,
        }


def cache_economics_for(settings: Settings) -> CacheEconomics:
    """A controller for the configured provider and answer model."""
    return CacheEconomics(price_for_settings(settings), cache_policy_for_settings(settings))


def _span(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
