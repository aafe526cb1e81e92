"""Is a model's reply an answer? The check every final reply passes before it is returned.

Small local models (tests/fixtures/local-model/) reply with things that are not answers: a
tool call written as text for a tool we do not have, our own tool output echoed back in
`<tool_response>` tags, a copy of the workspace-update framing, an acknowledgement, invented
"Grep output". None of these may reach the caller or the window's history. The loop answers
the model once with a correction (`correction_for`) and otherwise falls back.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from live_memory.memory import OBSERVATION_MARKERS
from live_memory.providers import ToolCall, ToolSpec, read_text_reply

__all__ = [
    "ReplyKind",
    "Verdict",
    "correction_for",
    "judge_reply",
    "no_answer_text",
    "partial_answer",
]

ReplyKind = Literal["answer", "refusal", "call_shaped", "echo", "imitation", "empty"]
"""`answer` and `refusal` are prose the caller may get; the rest are never returned."""

_MIN_PROSE_CHARS: Final = 12  # prose left around an echo that still counts as an answer
_ACKS: Final = frozenset({"noted", "ok", "okay", "understood", "got it", "acknowledged"})
_OWN_FRAMINGS: Final = (
    *OBSERVATION_MARKERS,
    "[retrieved for the next question",
    "[Live Memory searched",
    # The notices the server writes itself (loop_result, grounding): a copy is no answer.
    "[best-effort answer",
    "[no answer:",
    "[unverified:",
    "[checked in the workspace",
)
# A heading naming one of our tools' output right above a code block: output the model made up
# (ours15 seq 2: "**Grep output:**" then a fence of invented matches), not prose about results.
_INVENTED_OUTPUT = re.compile(
    r"\b(Grep|Read|Glob|find_paths|git_search|get_changed_files) (output|results?)\s*:"
    r"\s*(\*\*)?\s*\n+\s*```",
    re.IGNORECASE,
)
_REFUSAL = re.compile(
    r"\b(as an AI( language)? model|I (do not|don't|cannot|can't) (have )?access)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Verdict:
    kind: ReplyKind
    text: str = ""
    """The prose to return for `answer` / `refusal` (echo blocks taken out)."""
    calls: tuple[ToolCall, ...] = ()
    """Calls recovered from the text (a provider whose adapter left them there)."""
    unknown_name: str | None = None

    @property
    def is_answer(self) -> bool:
        return self.kind in ("answer", "refusal")


def judge_reply(text: str, tools: Sequence[ToolSpec]) -> Verdict:
    """Classify a reply that came without structured tool calls."""
    stripped = text.strip()
    if not stripped:
        return Verdict("empty")
    reading = read_text_reply(stripped, tools)
    if reading.calls:
        return Verdict("call_shaped", calls=reading.calls)
    if reading.call_shaped:
        return Verdict("call_shaped", unknown_name=reading.unknown_name)
    prose = reading.prose if reading.echoed else stripped
    if reading.echoed and len(prose) < _MIN_PROSE_CHARS:
        return Verdict("echo")
    if _is_imitation(prose):
        return Verdict("imitation")
    if _REFUSAL.search(prose[:300]):
        return Verdict("refusal", prose)
    return Verdict("answer", prose)


def _is_imitation(prose: str) -> bool:
    if prose.rstrip(".!").strip().lower() in _ACKS:
        return True
    if prose.startswith(_OWN_FRAMINGS):
        return True
    return _INVENTED_OUTPUT.search(prose[:2000]) is not None


def correction_for(verdict: Verdict, tools: Sequence[ToolSpec]) -> str:
    """The one user-side correction the model gets after a reply that is not an answer."""
    if verdict.kind == "call_shaped":
        listing = "; ".join(f"{t.name}({', '.join(_parameters(t))})" for t in tools)
        named = (
            f"`{verdict.unknown_name}` is not one of your tools. " if verdict.unknown_name else ""
        )
        return (
            f"{named}Your tools are: {listing}. Call one of them as a tool call, or answer "
            "the question in plain prose, citing workspace paths."
        )
    if verdict.kind == "echo":
        return (
            "That reply repeated tool output instead of answering. Answer the question now in "
            "plain prose, citing the paths and lines that output shows."
        )
    return (
        "That reply was not an answer to the question. Answer it now in plain prose, citing "
        "workspace paths; do not repeat earlier turns."
    )


def _parameters(spec: ToolSpec) -> list[str]:
    properties = spec.input_schema.get("properties")
    return [str(p) for p in properties] if isinstance(properties, dict) else []


_WHAT: Final = {
    "call_shaped": "a tool call Live Memory could not run",
    "echo": "a copy of tool output",
    "imitation": "a copy of earlier turns",
    "empty": "nothing",
}


def no_answer_text(kind: str) -> str:
    """What the caller gets when the model gave no answer twice (never stored in history)."""
    what = _WHAT.get(kind, "something that was not an answer")
    return (
        f"[no answer: the local model replied with {what} instead of an answer; ask again, "
        "or name the file or symbol you mean]"
    )


_CALL_SHAPED: Final = ("{", "[", "<tool", "```")


def partial_answer(streamed: str, tools: Sequence[ToolSpec]) -> str:
    """What a call cut at the deadline had streamed, unless it was turning into a tool call
    or is no answer otherwise (call-shaped text is never an answer)."""
    text = streamed.strip()
    if text.startswith(_CALL_SHAPED):
        return ""
    verdict = judge_reply(text, tools)
    return verdict.text if verdict.is_answer else ""
