"""Budgets from measured speed: the recorded llama-server figures in, a soft budget out."""

from __future__ import annotations

import pytest

from live_memory.agent import Budget, SpeedBoard, question_budget
from live_memory.agent.endpoint_speed import SpeedMeter
from live_memory.config import constants as C
from live_memory.providers import CallTimings

# oursLS15 seq 1: a cold 2,827-token prompt at 25.6 tokens/s, 34 tokens at 4.9 tokens/s.
COLD = CallTimings(
    prompt_tokens=2827,
    evaluated_tokens=2827,
    cached_tokens=0,
    prefill_s=110.4,
    generated_tokens=34,
    generate_s=6.9,
    first_token_s=None,
    wall_s=117.2,
    from_server=True,
)
# A follow-up: most of the prompt came from the slot's KV cache.
WARM = CallTimings(2900, 150, 2750, 6.0, 40, 8.0, None, 14.1, True)


def _budget(meter: SpeedMeter, *, local: bool = True, explicit: bool = False) -> float:
    return question_budget(
        meter.snapshot(),
        local=local,
        answer_tokens=256,
        default_s=60.0,
        explicit=explicit,
        mcp_timeout_s=120.0,
    ).seconds


def test_a_local_server_not_measured_yet_gets_all_the_mcp_timeout_allows() -> None:
    cap = 120.0 - C.HARD_DEADLINE_MARGIN_S - C.MCP_TIMEOUT_SAFETY_S
    assert _budget(SpeedMeter()) == cap
    assert _budget(SpeedMeter(), local=False) == 60.0  # cloud: the default, as before


def test_the_budget_follows_the_measured_speed_within_the_mcp_timeout() -> None:
    meter = SpeedMeter()
    meter.observe_call(COLD)
    meter.observe_question(1)
    snap = meter.snapshot()
    assert snap.prefill_tps == pytest.approx(2827 / 110.4)
    assert snap.generate_tps == pytest.approx(34 / 6.9)
    cold = question_budget(
        snap, local=True, answer_tokens=256, default_s=60.0, explicit=False, mcp_timeout_s=120.0
    )
    # One cold call is ~125 s of work: past what a 120 s MCP timeout allows, and it says so.
    assert cold.seconds == 100.0
    assert cold.predicted_s is not None and cold.predicted_s > 100
    assert "MCP timeout" in cold.reason
    for _ in range(8):  # warm follow-ups: a few hundred tokens re-evaluated per call
        meter.observe_call(WARM)
        meter.observe_question(2)
    warm = _budget(meter)
    assert 60.0 <= warm < 100.0


def test_a_local_budget_covers_one_full_prefill_of_the_prompt_about_to_be_sent() -> None:
    """Warm follow-ups teach a few hundred tokens a call; the first question after a new
    file re-evaluates thousands (issue 33: 3.1k tokens at 28-55 tokens/s ran out)."""
    meter = SpeedMeter()
    for _ in range(8):
        meter.observe_call(WARM)  # 25 tokens/s prefill, 5 tokens/s generation
        meter.observe_question(1)
    snap = meter.snapshot()
    assert snap.prefill_tps is not None and snap.generate_tps is not None

    def budget(local: bool, prompt_tokens: int | None = None) -> Budget:
        return question_budget(
            snap,
            local=local,
            answer_tokens=256,
            default_s=30.0,
            explicit=False,
            mcp_timeout_s=600.0,
            prompt_tokens=prompt_tokens,
        )

    planned, sent = budget(True), budget(True, 3100)
    full = 3100 / snap.prefill_tps + C.MIN_ANSWER_TOKENS / snap.generate_tps
    assert planned.seconds < full <= sent.seconds <= sent.waits_s == 580.0
    remote = budget(False, 3100)
    assert remote.seconds == remote.waits_s == 30.0  # a cloud endpoint keeps its default


def test_a_fast_gpu_server_keeps_the_default_floor() -> None:
    meter = SpeedMeter()
    meter.observe_call(CallTimings(3000, 3000, 0, 0.3, 200, 2.0, None, 2.3, True))
    assert _budget(meter) == 60.0


def test_an_explicit_timeout_is_used_as_set() -> None:
    meter = SpeedMeter()
    meter.observe_call(COLD)
    assert _budget(meter, explicit=True) == 60.0


def test_measured_wall_time_stands_in_where_the_server_sends_no_timings() -> None:
    meter = SpeedMeter()
    # llama-cpp-python: no token counts for the prefill, only the time to the first token.
    meter.observe_call(CallTimings(2827, None, None, 80.0, 27, 5.5, 80.0, 85.5, False))
    snap = meter.snapshot()
    assert snap.prefill_tps is None and snap.prefill_s_per_call == 80.0
    assert snap.generate_tps == pytest.approx(27 / 5.5)
    assert _budget(meter) == 100.0  # two calls of ~80 s: capped at the MCP timeout


def test_the_board_is_bounded_and_keeps_a_meter_per_endpoint() -> None:
    board = SpeedBoard()
    first = board.meter("http://127.0.0.1:8080/v1")
    assert board.meter("http://127.0.0.1:8080/v1") is first
    for index in range(C.SPEED_MAX_ENDPOINTS + 1):
        board.meter(f"http://host{index}/v1")
    assert board.meter("http://127.0.0.1:8080/v1") is not first  # the oldest was forgotten
