"""Per-model prices, context sizes and cache minimums, and the cost of one call.

The table is package data (`pricing.json`, dated by its `checked` field). A model name matches
the longest table key it contains, reading `.` and `_` as `-`, so dated ids, gateway prefixes
(`anthropic/claude-haiku-4.5`) and Bedrock ids all resolve. LIVE_MEMORY_PRICE_INPUT and
LIVE_MEMORY_PRICE_OUTPUT, set together, replace the table's prices; the cache multipliers
then derive cache prices from the input price.
"""

from __future__ import annotations

import functools
import importlib.resources
import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Literal

from live_memory.config import constants
from live_memory.providers.types import Usage

__all__ = [
    "Pricing",
    "PricingSource",
    "context_tokens_for",
    "cost_usd",
    "min_cacheable_tokens",
    "price_for",
    "pricing_checked",
]

logger = logging.getLogger(__name__)

PricingSource = Literal["table", "override", "unknown"]
_PER_TOKENS = 1_000_000


@dataclass(frozen=True, slots=True)
class Pricing:
    """USD per million tokens for one model."""

    model: str
    """The table key that matched, or the model name when none did."""
    input: float
    output: float
    cache_write_5m: float
    cache_write_1h: float
    cache_read: float
    context_tokens: int | None = None
    min_cacheable_tokens: int = constants.DEFAULT_MIN_CACHEABLE_TOKENS
    source: PricingSource = "table"
    long_prompt_threshold: int | None = None
    """Prompts longer than this many tokens pay `long_prompt` rates on every token."""
    long_prompt: Pricing | None = None

    def for_prompt(self, prompt_tokens: int) -> Pricing:
        """The rates that apply to a request with this many prompt tokens."""
        threshold = self.long_prompt_threshold
        if self.long_prompt is not None and threshold is not None and prompt_tokens > threshold:
            return self.long_prompt
        return self


def price_for(
    model: str,
    *,
    price_input: float | None = None,
    price_output: float | None = None,
    cache_read_mult: float | None = None,
    cache_write_mult: float | None = None,
) -> Pricing:
    """Pricing for `model`: the table's, or the overrides when both prices are given.

    Multipliers scale the input price into cache prices. With overrides, None means the
    defaults (0.10 / 1.25). For a table model, None or a multiplier equal to its default keeps
    the table's own cache prices (gpt-4.1 reads at 0.25x, OpenAI writes at 1x), so callers may
    pass the settings' values as they are. Unknown models without overrides cost 0.
    """
    entry = _lookup(model)
    if (price_input is None) != (price_output is None):
        logger.warning(
            "LIVE_MEMORY_PRICE_INPUT and LIVE_MEMORY_PRICE_OUTPUT must be set together; "
            "ignoring the one that is set"
        )
    if price_input is not None and price_output is not None:
        read = constants.DEFAULT_CACHE_READ_MULT if cache_read_mult is None else cache_read_mult
        write = constants.DEFAULT_CACHE_WRITE_MULT if cache_write_mult is None else cache_write_mult
        return Pricing(
            model=entry.model if entry else model,
            input=price_input,
            output=price_output,
            cache_write_5m=price_input * write,
            cache_write_1h=price_input * constants.CACHE_WRITE_1H_MULT,
            cache_read=price_input * read,
            context_tokens=entry.context_tokens if entry else None,
            min_cacheable_tokens=(
                entry.min_cacheable_tokens if entry else constants.DEFAULT_MIN_CACHEABLE_TOKENS
            ),
            source="override",
        )
    if entry is None:
        logger.info("no price known for model %r; its cost is counted as 0", model)
        return Pricing(model, 0.0, 0.0, 0.0, 0.0, 0.0, source="unknown")
    if cache_read_mult not in (None, constants.DEFAULT_CACHE_READ_MULT):
        entry = replace(entry, cache_read=entry.input * cache_read_mult)
    if cache_write_mult not in (None, constants.DEFAULT_CACHE_WRITE_MULT):
        entry = replace(entry, cache_write_5m=entry.input * cache_write_mult)
    return entry


def cost_usd(usage: Usage, pricing: Pricing, *, cache_ttl: Literal["5m", "1h"] = "5m") -> float:
    """USD cost of ONE call's usage (long-prompt tiers are decided per call)."""
    rates = pricing.for_prompt(usage.input_tokens)
    uncached = max(0, usage.input_tokens - usage.cache_read_tokens - usage.cache_write_tokens)
    write = rates.cache_write_1h if cache_ttl == "1h" else rates.cache_write_5m
    total = (
        uncached * rates.input
        + usage.cache_read_tokens * rates.cache_read
        + usage.cache_write_tokens * write
        + usage.output_tokens * rates.output
    )
    return total / _PER_TOKENS


def context_tokens_for(model: str) -> int | None:
    """The model's context window in tokens, when the table knows it."""
    entry = _lookup(model)
    return entry.context_tokens if entry else None


def min_cacheable_tokens(model: str) -> int:
    """The shortest prefix (tokens) the provider caches for this model."""
    entry = _lookup(model)
    return entry.min_cacheable_tokens if entry else constants.DEFAULT_MIN_CACHEABLE_TOKENS


def pricing_checked() -> str:
    """The date the price table was last checked against the providers' pages."""
    return str(_table()[0])


def _normalise(name: str) -> str:
    return name.lower().replace(".", "-").replace("_", "-")


@functools.cache
def _lookup(model: str) -> Pricing | None:
    name = _normalise(model)
    matches = [key for key in _table()[1] if key in name]
    if not matches:
        return None
    return _table()[1][max(matches, key=len)]


@functools.cache
def _table() -> tuple[str, Mapping[str, Pricing]]:
    text = importlib.resources.files(__package__).joinpath("pricing.json").read_text("utf-8")
    data = json.loads(text)
    models = {_normalise(key): _entry(key, raw) for key, raw in data["models"].items()}
    return str(data["checked"]), models


def _entry(key: str, raw: Mapping[str, object]) -> Pricing:
    long_raw = raw.get("long_prompt")
    long_prompt = None
    threshold = None
    if isinstance(long_raw, Mapping):
        threshold = int(_number(key, long_raw, "threshold_tokens"))
        long_prompt = _rates(key, long_raw)
    context = raw.get("context_tokens")
    minimum = raw.get("min_cacheable_tokens", constants.DEFAULT_MIN_CACHEABLE_TOKENS)
    return replace(
        _rates(key, raw),
        context_tokens=context if isinstance(context, int) else None,
        min_cacheable_tokens=minimum if isinstance(minimum, int) else 0,
        long_prompt_threshold=threshold,
        long_prompt=long_prompt,
    )


def _rates(key: str, raw: Mapping[str, object]) -> Pricing:
    return Pricing(
        model=key,
        input=_number(key, raw, "input"),
        output=_number(key, raw, "output"),
        cache_write_5m=_number(key, raw, "cache_write_5m"),
        cache_write_1h=_number(key, raw, "cache_write_1h"),
        cache_read=_number(key, raw, "cache_read"),
    )


def _number(key: str, raw: Mapping[str, object], field: str) -> float:
    value = raw.get(field)
    if not isinstance(value, int | float):
        raise TypeError(f"pricing.json: {key}.{field} must be a number, got {value!r}")
    return float(value)
