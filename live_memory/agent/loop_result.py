"""What the agent loop returns, and the answers it makes up itself (best effort, no answer)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from live_memory.agent.reply_check import no_answer_text
from live_memory.providers import CallTimings, ChatResponse, Usage
from live_memory.tools import FileRead, Span

__all__ = ["BEST_EFFORT_NOTICE", "LoopResult", "StopReason", "best_effort", "finish", "no_answer"]

StopReason = Literal["answered", "max_iterations", "timed_out", "max_tokens"]


@dataclass(slots=True)
class LoopResult:
    answer: str = ""
    stop_reason: StopReason = "answered"
    usage: Usage = field(default_factory=Usage)
    usage_by_call: list[Usage] = field(default_factory=list)
    tool_calls: int = 0
    reads: list[FileRead] = field(default_factory=list)
    spans: list[Span] = field(default_factory=list)
    """The lines the tools showed the model (the answer's sources beside its citations)."""
    iterations: int = 0
    model: str = ""
    provider_s: float = 0.0
    """Wall time spent waiting on the provider (the rest is our own overhead)."""
    timings: list[CallTimings] = field(default_factory=list)
    """Each finished call's timings (the endpoint's measured speed is learnt from them)."""
    unverified: bool = False
    """The answer was given before anything grounded it (the caller adds a note)."""
    checked: str = ""
    """The cold guard's check of the answer's names (shown with the answer, not stored)."""
    written: str = ""
    """What the model itself wrote as its answer: the only text the history keeps (empty when
    `answer` is a notice of ours, best effort or no answer, with nothing of the model's)."""
    forced_tool_ignored: bool = False
    non_answer: str = ""
    """The kind of the last reply that was not an answer (call_shaped, echo, ...), if any."""

    @property
    def timed_out(self) -> bool:
        return self.stop_reason == "timed_out"

    @property
    def storable(self) -> bool:
        return bool(self.written)

    @property
    def files_read(self) -> int:
        return len({r.path for r in self.reads})


def finish(
    result: LoopResult, response: ChatResponse, answer: str, *, unverified: bool = False
) -> None:
    result.answer = result.written = answer
    result.unverified = unverified
    if response.stop_reason == "max_tokens" and answer == response.text.strip():
        result.stop_reason = "max_tokens"


BEST_EFFORT_NOTICE = "[best-effort answer: the time budget ran out before a complete answer]"


def best_effort(last_text: str, result: LoopResult) -> str:
    """The notice returned when the budget ran out; only `last_text` (the model's) is kept
    as `written`, so the notice never reaches the history a model sees again."""
    result.written = last_text
    explored = sorted({r.path for r in result.reads})
    lines = [BEST_EFFORT_NOTICE]
    if last_text:
        lines.append(last_text)
    if explored:
        lines.append("Files examined so far: " + ", ".join(explored))
    if not last_text and not explored:
        lines.append("No findings yet; ask again or narrow the question.")
    return "\n".join(lines)


def no_answer(kind: str, result: LoopResult) -> str:
    explored = sorted({r.path for r in result.reads})
    text = no_answer_text(kind)
    return text + ("\nFiles examined so far: " + ", ".join(explored) if explored else "")
