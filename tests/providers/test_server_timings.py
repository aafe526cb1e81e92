"""Cache and speed figures from what real local servers sent (tests/fixtures/local-model/)."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from openai.types import CompletionUsage

from live_memory.providers import is_local_endpoint
from live_memory.providers.server_timings import timings_of, usage_of
from tests.support.fixtures import LOCAL_MODEL


def _calls(name: str) -> list[dict[str, Any]]:
    lines = (LOCAL_MODEL / name / "calls.jsonl").read_bytes().splitlines()
    return [orjson.loads(line) for line in lines if line.strip()]


def test_llama_server_reuse_comes_from_timings_cache_n() -> None:
    call = next(c for c in _calls("oursLS15") if (c.get("timings") or {}).get("cache_n"))
    usage = usage_of(CompletionUsage.model_validate(call["usage"]), call["timings"])
    assert usage.cache_read_tokens == call["timings"]["cache_n"]
    assert usage.cache_unreported_tokens == 0
    assert usage.input_tokens == call["usage"]["prompt_tokens"]
    timings = timings_of(call["timings"], usage, first_token_s=None, wall_s=call["wall_s"])
    assert timings.from_server
    assert timings.evaluated_tokens == call["timings"]["prompt_n"]
    assert timings.prefill_s == pytest.approx(call["timings"]["prompt_ms"] / 1000)
    assert timings.generated_tokens == call["timings"]["predicted_n"]


def test_llama_cpp_python_reports_no_cache_figure_so_reuse_is_unknown() -> None:
    call = _calls("ours15")[0]
    assert call["timings"] is None and "prompt_tokens_details" not in call["usage"]
    usage = usage_of(CompletionUsage.model_validate(call["usage"]), None)
    assert usage.cache_unreported_tokens == usage.input_tokens == call["usage"]["prompt_tokens"]
    assert usage.cache_hit_ratio is None  # "unknown", not 0.0
    measured = timings_of(None, usage, first_token_s=40.0, wall_s=47.5)
    assert not measured.from_server
    assert measured.evaluated_tokens is None and measured.cached_tokens is None
    assert measured.prefill_s == 40.0 and measured.generate_s == pytest.approx(7.5)


def test_an_explicit_zero_cached_tokens_is_a_reported_zero() -> None:
    usage = usage_of(
        CompletionUsage.model_validate(
            {
                "prompt_tokens": 100,
                "completion_tokens": 5,
                "total_tokens": 105,
                "prompt_tokens_details": {"cached_tokens": 0},
            }
        ),
        None,
    )
    assert usage.cache_hit_ratio == 0.0 and usage.cache_unreported_tokens == 0


@pytest.mark.parametrize(
    ("base_url", "local"),
    [
        ("http://127.0.0.1:8080/v1", True),
        ("http://localhost:11434/v1", True),
        ("http://[::1]:8000/v1", True),
        ("http://10.0.0.5:1234/v1", True),
        ("http://gpu-box.local:8000/v1", True),
        ("https://api.openai.com/v1", False),
        ("https://openrouter.ai/api/v1", False),
        ("http://8.8.8.8/v1", False),
    ],
)
def test_local_endpoints_are_told_by_their_address(base_url: str, local: bool) -> None:
    assert is_local_endpoint("openai", base_url) is local
    assert not is_local_endpoint("anthropic", base_url)
