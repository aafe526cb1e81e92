"""How fast an endpoint is, learnt from its answers, and the soft budget that follows.

A 60 s budget is plenty for a cloud model and hopeless for a 1.5B model on two CPU cores: the
recordings show 75-200 s for a cold 2.9k-token prompt and 100-800 s of prefill after a
notified file. So the budget of a question on a local server is planned from what the server
was measured to do: prefill tokens per second (llama.cpp `timings`, or the time to the first
streamed token), generation tokens per second, prompt tokens re-evaluated per call, calls per
question. The budget is never below the configured default and never past what the MCP client
waits (`LIVE_MEMORY_MCP_TIMEOUT_S` less the hard backstop's margin); an explicitly set
LIVE_MEMORY_DEFAULT_TIMEOUT_S is used as set.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

from live_memory.config import constants as C
from live_memory.providers import CallTimings

__all__ = ["Budget", "SpeedBoard", "SpeedMeter", "SpeedSnapshot", "question_budget"]


@dataclass(frozen=True, slots=True)
class SpeedSnapshot:
    """One endpoint's learnt figures (None = not measured yet)."""

    prefill_tps: float | None = None
    generate_tps: float | None = None
    evaluated_per_call: float | None = None
    """Prompt tokens the server re-evaluated per call (its KV cache served the rest)."""
    prefill_s_per_call: float | None = None
    """Seconds to the first token per call: the measure where no token count is known."""
    output_per_call: float | None = None
    calls_per_question: float | None = None
    samples: int = 0
    from_server: bool = False

    def to_json(self) -> dict[str, object]:
        def r(value: float | None) -> float | None:
            return None if value is None else round(value, 2)

        return {
            "prefill_tokens_per_s": r(self.prefill_tps),
            "generate_tokens_per_s": r(self.generate_tps),
            "evaluated_tokens_per_call": r(self.evaluated_per_call),
            "prefill_s_per_call": r(self.prefill_s_per_call),
            "output_tokens_per_call": r(self.output_per_call),
            "calls_per_question": r(self.calls_per_question),
            "samples": self.samples,
            "source": "server timings" if self.from_server else "measured wall time",
        }


def _ewma(old: float | None, new: float) -> float:
    return new if old is None else (1 - C.SPEED_EWMA_ALPHA) * old + C.SPEED_EWMA_ALPHA * new


class SpeedMeter:
    """One endpoint's running averages. Written when a question ends (the I/O loop), read
    when one is admitted (the gateway loop): a lock keeps each update whole."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._snap = SpeedSnapshot()

    def observe_call(self, t: CallTimings) -> None:
        with self._lock:
            s = self._snap
            prefill, evaluated, per_call = s.prefill_tps, s.evaluated_per_call, s.prefill_s_per_call
            if t.evaluated_tokens is not None:
                evaluated = _ewma(evaluated, t.evaluated_tokens)
                if t.evaluated_tokens >= C.SPEED_MIN_SAMPLE_TOKENS and t.prefill_s:
                    prefill = _ewma(prefill, t.evaluated_tokens / t.prefill_s)
            if t.prefill_s is not None:
                per_call = _ewma(per_call, t.prefill_s)
            generate = s.generate_tps
            if t.generated_tokens >= C.SPEED_MIN_SAMPLE_TOKENS and t.generate_s:
                generate = _ewma(generate, t.generated_tokens / t.generate_s)
            self._snap = SpeedSnapshot(
                prefill_tps=prefill,
                generate_tps=generate,
                evaluated_per_call=evaluated,
                prefill_s_per_call=per_call,
                output_per_call=_ewma(s.output_per_call, t.generated_tokens),
                calls_per_question=s.calls_per_question,
                samples=s.samples + 1,
                from_server=t.from_server or s.from_server,
            )

    def observe_question(self, calls: int) -> None:
        if calls <= 0:
            return
        with self._lock:
            s = self._snap
            self._snap = SpeedSnapshot(
                s.prefill_tps,
                s.generate_tps,
                s.evaluated_per_call,
                s.prefill_s_per_call,
                s.output_per_call,
                _ewma(s.calls_per_question, calls),
                s.samples,
                s.from_server,
            )

    def snapshot(self) -> SpeedSnapshot:
        with self._lock:
            return self._snap


class SpeedBoard:
    """Meters by endpoint URL for the process's lifetime (a reload keeps what was learnt);
    at most SPEED_MAX_ENDPOINTS, the least recently used forgotten first."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._meters: OrderedDict[str, SpeedMeter] = OrderedDict()

    def meter(self, endpoint: str) -> SpeedMeter:
        with self._lock:
            meter = self._meters.pop(endpoint, None) or SpeedMeter()
            self._meters[endpoint] = meter
            while len(self._meters) > C.SPEED_MAX_ENDPOINTS:
                self._meters.popitem(last=False)
            return meter


@dataclass(frozen=True, slots=True)
class Budget:
    seconds: float
    reason: str
    predicted_s: float | None = None
    """What the measured speed says a question takes (before the factor and the clamps)."""
    ceiling_s: float | None = None
    """The longest the question may take (the edge waits that long): on a local server the
    MCP timeout's share, so the question can stretch `seconds` to the prompt it sends."""

    @property
    def waits_s(self) -> float:
        return self.seconds if self.ceiling_s is None else max(self.ceiling_s, self.seconds)


def question_budget(
    speed: SpeedSnapshot,
    *,
    local: bool,
    answer_tokens: int,
    default_s: float,
    explicit: bool,
    mcp_timeout_s: float,
    prompt_tokens: int | None = None,
) -> Budget:
    """The soft budget of the next question on this endpoint; with `prompt_tokens` (the
    prompt about to be sent), a local server's covers at least one full prefill of it and a
    minimal answer at the measured speeds: the first question after new content re-evaluates
    far more than the calls before it (issue 33: a 3.1k-token prompt at 28-55 tokens/s ran
    past the 60 s the past calls predicted)."""
    cap = max(mcp_timeout_s - C.HARD_DEADLINE_MARGIN_S - C.MCP_TIMEOUT_SAFETY_S, 1.0)
    if explicit:
        return Budget(default_s, "LIVE_MEMORY_DEFAULT_TIMEOUT_S")
    if not local:
        return Budget(min(default_s, cap), "default")
    if speed.samples == 0:
        return Budget(
            cap, "local server, speed not measured yet: what the MCP timeout allows", None, cap
        )
    if speed.evaluated_per_call is not None and speed.prefill_tps:
        prefill = speed.evaluated_per_call / speed.prefill_tps
    else:
        prefill = speed.prefill_s_per_call or 0.0
    output = min(answer_tokens, max(2 * (speed.output_per_call or 0.0), C.MIN_ANSWER_TOKENS))
    generate = output / speed.generate_tps if speed.generate_tps else 0.0
    calls = speed.calls_per_question or C.SPEED_CALLS_PER_QUESTION
    predicted = calls * (prefill + generate)
    if prompt_tokens and speed.prefill_tps:  # one full prefill, then a minimal answer
        minimal = C.MIN_ANSWER_TOKENS / speed.generate_tps if speed.generate_tps else 0.0
        predicted = max(predicted, prompt_tokens / speed.prefill_tps + minimal)
    seconds = min(max(predicted * C.SPEED_BUDGET_FACTOR, default_s), cap)
    if predicted * C.SPEED_BUDGET_FACTOR > cap:
        reason = (
            f"measured speed needs ~{predicted:.0f} s a question, more than the MCP timeout "
            f"allows ({mcp_timeout_s:.0f} s): raise it and LIVE_MEMORY_MCP_TIMEOUT_S together"
        )
    else:
        reason = "measured speed of this endpoint"
    return Budget(round(seconds, 1), reason, round(predicted, 1), cap)
