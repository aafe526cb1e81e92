"""What the replaying local model server can be told to do: the recorded behaviours.

Each behaviour is what a small model behind llama.cpp did in the recordings under
`tests/fixtures/local-model/` (see its README), written as data a test scripts:

    fake.script(WritesCall("click.ArgumentParser", {"file_path": "src/click/core.py"}),
                EchoesToolResult(), CopiesLastAssistant())

A behaviour turns into reply text given the request it answers (`reply_text`): an echo repeats
the latest tool result, an imitation copies an earlier turn. None of them produces structured
`tool_calls` except `Structured`, which stands for a server that does honour tools.
`recorded(name)` replays a recording's replies verbatim, in order.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from tests.support.fixtures import LOCAL_MODEL

__all__ = [
    "Behaviour",
    "CallShape",
    "CopiesLastAssistant",
    "CopiesObservation",
    "EchoesToolResult",
    "Says",
    "Structured",
    "WritesCall",
    "call_text",
    "recorded",
    "recorded_calls",
    "reply_text",
]

CallShape = Literal["bare", "fenced", "tags"]

_INVENTED_OBSERVATION = (
    "### src/click/command_line_reference.md (10498 bytes, sha256 d7b37)\n\n```python\n"
    'class ShellCompletion:\n    """A class for shell completion"""\n'
)


@dataclass(frozen=True, slots=True)
class Says:
    """Plain prose (an answer, a refusal, invented "Grep output": whatever the text is)."""

    text: str
    truncated: bool = False
    """Cut at `max_tokens` (`finish_reason: "length"`)."""
    hold: threading.Event | None = None
    """A streamed reply pauses after its first piece until the test sets this event (a
    model mid-answer for as long as the test needs, not for a guessed time)."""


@dataclass(frozen=True, slots=True)
class WritesCall:
    """A tool call written as message text instead of `tool_calls`."""

    name: str
    arguments: Mapping[str, object] = field(default_factory=dict)
    shape: CallShape = "bare"
    extra_brace: bool = False
    """One closing brace too many (the 0.5B model's habit)."""
    before: str = ""
    """Prose before the call (llama-server's model under a forced tool)."""


@dataclass(frozen=True, slots=True)
class EchoesToolResult:
    """A `<tool_response>` block repeating the latest tool result (or `invented` text)."""

    invented: str | None = None


@dataclass(frozen=True, slots=True)
class CopiesLastAssistant:
    """The previous assistant turn, verbatim (the recorded "Noted." answer)."""


@dataclass(frozen=True, slots=True)
class CopiesObservation:
    """The opening line of the latest earlier user turn that is not the question, followed
    by invented file content and cut at `max_tokens` (the recorded "[observation]" answer)."""


@dataclass(frozen=True, slots=True)
class Structured:
    """A proper `tool_calls` reply (a server that honours tools)."""

    name: str
    arguments: Mapping[str, object] = field(default_factory=dict)


Behaviour = (
    Says | WritesCall | EchoesToolResult | CopiesLastAssistant | CopiesObservation | Structured
)


def call_text(behaviour: WritesCall) -> str:
    """The text a model writes for this call, in the recorded shapes."""
    body = json.dumps({"name": behaviour.name, "arguments": dict(behaviour.arguments)}, indent=2)
    if behaviour.extra_brace:
        body += "}"
    if behaviour.shape == "fenced":
        body = f"```json\n{body}\n```"
    elif behaviour.shape == "tags":
        body = f"<tool_call>\n{body}\n</tool_call>"
    return f"{behaviour.before}\n\n{body}" if behaviour.before else body


def reply_text(behaviour: Behaviour, messages: Sequence[Mapping[str, Any]]) -> tuple[str, bool]:
    """(content, cut at max_tokens) for a text behaviour answering `messages`."""
    if isinstance(behaviour, Says):
        return behaviour.text, behaviour.truncated
    if isinstance(behaviour, WritesCall):
        return call_text(behaviour), False
    if isinstance(behaviour, EchoesToolResult):
        body = behaviour.invented if behaviour.invented is not None else _last_tool_result(messages)
        return f"<tool_response>\n{body}\n</tool_response>", False
    if isinstance(behaviour, CopiesLastAssistant):
        earlier = [_text(m) for m in messages[:-1] if m.get("role") == "assistant"]
        return (earlier[-1] if earlier and earlier[-1] else "Noted."), False
    if isinstance(behaviour, CopiesObservation):
        earlier = [_text(m) for m in messages[1:-1] if m.get("role") == "user"]
        head = earlier[-1].splitlines()[0] if earlier and earlier[-1] else "[observation]"
        return f"{head}\n{_INVENTED_OBSERVATION}", True
    raise TypeError(f"{behaviour!r} is not a text behaviour")


def recorded_calls(name: str) -> list[dict[str, Any]]:
    """The provider requests of recording `name` (e.g. "ours05"), one dict per line."""
    path = Path(LOCAL_MODEL) / name / "calls.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def recorded(name: str, seqs: Sequence[int] | None = None) -> list[Says]:
    """The replies of recording `name` (those numbered `seqs`, in that order) as behaviours."""
    calls = {int(c["seq"]): c for c in recorded_calls(name)}
    chosen = list(seqs) if seqs is not None else sorted(calls)
    return [
        Says(str(calls[s]["content"] or ""), truncated=calls[s]["finish_reason"] == "length")
        for s in chosen
    ]


def _last_tool_result(messages: Sequence[Mapping[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "tool":
            return _text(message)
    return "Found 1 file\nsrc/click/shell_completion.py"


def _text(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""
