"""Tool calls that local models write as text instead of `tool_calls`, read as a protocol.

Small models behind OpenAI-compatible servers (llama.cpp, Ollama, ...) never fill `tool_calls`
in the recordings (tests/fixtures/local-model/); they write the call into the message text:
bare JSON, JSON in a ```json fence, `<tool_call>` tags, after a sentence of prose, with a
brace too many or cut short, under a made-up name that carries a real tool's arguments. They
also echo our tool results back in `<tool_response>` blocks.

`read_text_reply` turns such text into proper ToolCalls for the tools we offered, maps an
unknown name to the one offered tool whose schema fits its arguments, and otherwise reports
the reply as call-shaped (the caller answers the model with the tool list, never the caller's
client with the text). Work is bounded: at most TEXT_CALL_MAX_CHARS characters are examined,
at most TEXT_CALL_MAX_CANDIDATES places decoded, each decode linear in what it consumes.
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from live_memory.config import constants as C
from live_memory.providers.types import ToolCall, ToolSpec

__all__ = [
    "UNPARSED_ARGUMENTS_KEY",
    "Offered",
    "TextReply",
    "parse_arguments",
    "read_text_reply",
    "tool_calls_from_text",
]

logger = logging.getLogger(__name__)

UNPARSED_ARGUMENTS_KEY = "_unparsed_arguments"
"""Arguments that were not a JSON object arrive under this key, so the tool reports the error
to the model instead of the question failing."""

Offered = Sequence[ToolSpec] | Collection[str]
"""The offered tools: their specs (unknown names can then be mapped by arguments) or names."""

_THINK = re.compile(r"^\s*<think>.*?</think>", re.DOTALL)  # reasoning models' preamble
_ECHO = re.compile(r"<tool_response>.*?(?:</tool_response>|\Z)", re.DOTALL)
_TAG = re.compile(r"<tool_call>(?P<body>.*?)(?:</tool_call>|\Z)", re.DOTALL)
# The closing fence ends its line: JSON keeps a newline out of its strings, so "```" inside a
# value (`{"q": "```"}`) is never taken for the end of the block.
_FENCE = re.compile(r"```[A-Za-z]*[ \t]*\n?(?P<body>.*?)(?:```[ \t]*(?=\n|\Z)|\Z)", re.DOTALL)
_START = re.compile(r"[{\[]")
_NAME_KEY = re.compile(r'"(?:name|function|tool)"\s*:')
_ARGUMENT_KEYS = ("arguments", "parameters", "args", "input")
_MAX_DECODE_DEPTH = 3
_MAX_CLOSERS = 2  # a reply cut short by one or two braces is still read


@dataclass(frozen=True, slots=True)
class TextReply:
    """What a reply's text stands for."""

    calls: tuple[ToolCall, ...] = ()
    prose: str = ""
    """The text outside any call and any echoed `<tool_response>` block, stripped."""
    call_shaped: bool = False
    """It wrote a tool call that is none of the offered tools (and no call was recovered)."""
    unknown_name: str | None = None
    echoed: bool = False
    """It held `<tool_response>` blocks (an echo of tool output, never an answer itself)."""


def parse_arguments(raw: object) -> Mapping[str, object]:
    """Tool-call arguments as a mapping: JSON text, possibly encoded twice, or a dict."""
    value = raw
    for _ in range(_MAX_DECODE_DEPTH):
        if not isinstance(value, str):
            break
        if not value.strip():
            return {}
        try:
            value = json.loads(value)
        except (json.JSONDecodeError, RecursionError):
            break
    if isinstance(value, dict):
        return value
    if value is None:
        return {}
    logger.warning("tool-call arguments are not a JSON object: %.200r", raw)
    return {UNPARSED_ARGUMENTS_KEY: raw if isinstance(raw, str) else json.dumps(raw)}


def tool_calls_from_text(text: str, offered: Offered) -> tuple[ToolCall, ...]:
    """The tool calls a reply's text stands for, or () when it is not one."""
    return read_text_reply(text, offered).calls


def read_text_reply(text: str, offered: Offered) -> TextReply:
    """Read a reply's text: recovered calls, the prose around them, call-shaped, echoed."""
    body = _THINK.sub("", text[: C.TEXT_CALL_MAX_CHARS], count=1)
    echoed = "<tool_response>" in body
    if echoed:
        body = _ECHO.sub("", body)
    specs = [t for t in offered if isinstance(t, ToolSpec)]
    names = {t.name if isinstance(t, ToolSpec) else str(t) for t in offered}
    items: list[object] = []
    spans: list[tuple[int, int]] = []
    broken = False
    for start, end, candidate in _candidates(body):
        decoded = _decode(candidate)
        if decoded is None:
            if _NAME_KEY.search(candidate[:200]):  # a call, but not decodable
                broken = True
                spans.append((start, end))
            continue
        shaped = [i for i in decoded if _call_parts(i) is not None]
        if shaped and len(shaped) == len(decoded):  # else JSON that is not a call (data)
            items += shaped
            spans.append((start, end))
    prose = _outside(body, spans)
    if not items:
        return TextReply(prose=prose, call_shaped=broken, echoed=echoed)
    calls, unknown = _resolve(items, names, specs)
    if unknown is not None:
        return TextReply(prose=prose, call_shaped=True, unknown_name=unknown, echoed=echoed)
    logger.info("recovered %d tool call(s) written as text", len(calls))
    return TextReply(calls=tuple(calls), prose=prose, echoed=echoed)


def _candidates(body: str) -> list[tuple[int, int, str]]:
    """(start, end, text) of the places a call may be: tag bodies, fence bodies, else the
    first JSON opener after at most TEXT_CALL_MAX_PREAMBLE_CHARS of prose."""
    found: list[tuple[int, int, str]] = []
    for pattern in (_TAG, _FENCE):
        for match in pattern.finditer(body):
            if pattern is _FENCE and match.start() > C.TEXT_CALL_MAX_PREAMBLE_CHARS:
                break  # a fence deep in prose is an answer quoting JSON, not a call
            inner = match.group("body").strip()
            if inner.startswith(("{", "[")):
                found.append((match.start(), match.end(), inner))
            if len(found) >= C.TEXT_CALL_MAX_CANDIDATES:
                return found
        if found:
            return found
    opener = _START.search(body, 0, C.TEXT_CALL_MAX_PREAMBLE_CHARS + 1)
    if opener is not None:
        found.append((opener.start(), len(body), body[opener.start() :]))
    return found


def _decode(candidate: str) -> list[object] | None:
    """The JSON value at the start of `candidate` as a list of items (junk after it ignored),
    or None when it does not decode even with a closing brace or two added."""
    decoder = json.JSONDecoder()
    for closers in range(_MAX_CLOSERS + 1):
        try:
            value, _ = decoder.raw_decode(candidate + "}" * closers)
        except (json.JSONDecodeError, RecursionError):
            continue
        return value if isinstance(value, list) else [value]
    return None


def _call_parts(item: object) -> tuple[str, object] | None:
    """(name, raw arguments) when `item` is shaped like a call (a name and an arguments
    field: `{"name": "my-pkg", "version": ...}` is data), else None."""
    if not isinstance(item, dict):
        return None
    function = item.get("function")
    if isinstance(function, dict):  # {"type": "function", "function": {...}}
        item = function
    name = item.get("name", item.get("tool"))
    if not isinstance(name, str) or not name.strip():
        return None
    for key in _ARGUMENT_KEYS:
        if key in item:
            return name.strip(), item[key]
    return None


def _resolve(
    items: list[object], names: set[str], specs: Sequence[ToolSpec]
) -> tuple[list[ToolCall], str | None]:
    """The calls, or the first name that maps to no offered tool."""
    calls: list[ToolCall] = []
    for item in items:
        parts = _call_parts(item)
        assert parts is not None
        name, raw = parts
        arguments = parse_arguments(raw)
        tool = _tool_for(name, arguments, names, specs)
        if tool is None:
            return [], name
        calls.append(ToolCall(f"call_{uuid.uuid4().hex[:24]}", tool, arguments))
    return calls, None


def _tool_for(
    name: str, arguments: Mapping[str, object], names: set[str], specs: Sequence[ToolSpec]
) -> str | None:
    if name in names:
        return name
    folded = {n.lower(): n for n in names}
    if name.lower() in folded:
        return folded[name.lower()]
    if not arguments or UNPARSED_ARGUMENTS_KEY in arguments:
        return None
    keys = set(arguments)
    fitting = [s.name for s in specs if _fits(s, keys)]
    if len(fitting) == 1:
        logger.info("tool call named %.80r mapped to %s by its arguments", name, fitting[0])
        return fitting[0]
    return None


def _fits(spec: ToolSpec, keys: set[str]) -> bool:
    """Whether arguments with these keys are valid for `spec` (every key known, every
    required one present)."""
    properties = spec.input_schema.get("properties")
    required = spec.input_schema.get("required")
    known = set(properties) if isinstance(properties, Mapping) else set()
    needed = {str(r) for r in required} if isinstance(required, list) else set()
    return keys <= known and needed <= keys


def _outside(body: str, spans: list[tuple[int, int]]) -> str:
    """`body` without the spans (sorted, non-overlapping), stripped."""
    kept, at = [], 0
    for start, end in spans:
        kept.append(body[at:start])
        at = end
    kept.append(body[at:])
    return "".join(kept).strip()
