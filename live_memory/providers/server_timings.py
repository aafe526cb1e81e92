"""What an OpenAI-compatible server says about its own work: cached tokens and timings.

Servers differ in what they report (the recordings in tests/fixtures/local-model/ show it):
OpenAI and vLLM give `usage.prompt_tokens_details.cached_tokens`, DeepSeek
`prompt_cache_hit/miss_tokens`, llama.cpp's `llama-server` adds a `timings` object whose
`cache_n` is the prompt reused from its KV cache and `prompt_n` the part re-evaluated, and
llama-cpp-python's server gives no cache figure at all. A missing figure stays missing: its
tokens are counted as `cache_unreported_tokens`, so the hit ratio says "unknown", never 0.0.
"""

from __future__ import annotations

from collections.abc import Mapping

from live_memory.providers.types import CallTimings, Usage

__all__ = ["timings_of", "usage_of"]

_MS = 1000.0


def usage_of(usage: object, timings: Mapping[str, object] | None) -> Usage:
    """Usage from a chat completion's `usage` object and the server's `timings` (or None)."""
    extra: Mapping[str, object] = getattr(usage, "model_extra", None) or {}
    details = getattr(usage, "prompt_tokens_details", None)
    hit = _int(extra.get("prompt_cache_hit_tokens"))
    miss = _int(extra.get("prompt_cache_miss_tokens"))
    prompt = max(_int(getattr(usage, "prompt_tokens", None)), hit + miss)
    cached_field = getattr(details, "cached_tokens", None)
    cache_n = _opt_int((timings or {}).get("cache_n"))
    reported = (
        isinstance(cached_field, int) or "prompt_cache_hit_tokens" in extra or cache_n is not None
    )
    cached = max(_int(cached_field), hit, cache_n or 0)
    if timings and prompt == 0:
        # llama.cpp without a usage object (some streaming builds): its timings still count.
        prompt = (cache_n or 0) + _int(timings.get("prompt_n"))
    return Usage(
        input_tokens=prompt,
        output_tokens=_int(getattr(usage, "completion_tokens", None))
        or _int((timings or {}).get("predicted_n")),
        cache_read_tokens=min(cached, prompt) if prompt else cached,
        cache_write_tokens=_int(getattr(details, "cache_write_tokens", None)),
        cache_unreported_tokens=0 if reported else prompt,
    )


def timings_of(
    timings: Mapping[str, object] | None,
    usage: Usage,
    *,
    first_token_s: float | None,
    wall_s: float,
) -> CallTimings:
    """The call's timings: the server's where it sent them, else our own measurements."""
    if timings:
        prompt_ms = _opt_float(timings.get("prompt_ms"))
        predicted_ms = _opt_float(timings.get("predicted_ms"))
        return CallTimings(
            prompt_tokens=usage.input_tokens,
            evaluated_tokens=_opt_int(timings.get("prompt_n")),
            cached_tokens=_opt_int(timings.get("cache_n")),
            prefill_s=None if prompt_ms is None else prompt_ms / _MS,
            generated_tokens=_int(timings.get("predicted_n")) or usage.output_tokens,
            generate_s=None if predicted_ms is None else predicted_ms / _MS,
            first_token_s=first_token_s,
            wall_s=wall_s,
            from_server=True,
        )
    known_cache = usage.cache_unreported_tokens == 0
    evaluated = usage.input_tokens - usage.cache_read_tokens if known_cache else None
    generate_s = None if first_token_s is None else max(wall_s - first_token_s, 0.0)
    return CallTimings(
        prompt_tokens=usage.input_tokens,
        evaluated_tokens=evaluated,
        cached_tokens=usage.cache_read_tokens if known_cache else None,
        prefill_s=first_token_s,
        generated_tokens=usage.output_tokens,
        generate_s=generate_s,
        first_token_s=first_token_s,
        wall_s=wall_s,
        from_server=False,
    )


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _opt_int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _opt_float(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)
