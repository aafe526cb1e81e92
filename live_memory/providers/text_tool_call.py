"""Recovering tool calls that local models write as text instead of `tool_calls`.

Small local models served behind OpenAI-compatible endpoints often answer a tool request with
a JSON object in the message text — bare, in a ```json fence, or in `<tool_call>` tags — and
sometimes encode the arguments twice. These helpers turn such text into proper ToolCalls, but
only for tools we actually offered, so a model quoting JSON in an answer is left alone.
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from collections.abc import Collection, Mapping

from live_memory.providers.types import ToolCall

__all__ = ["UNPARSED_ARGUMENTS_KEY", "parse_arguments", "tool_calls_from_text"]

logger = logging.getLogger(__name__)

UNPARSED_ARGUMENTS_KEY = "_unparsed_arguments"
"""Arguments that were not a JSON object arrive under this key, so the tool reports the error
to the model instead of the question failing."""

_FENCE = re.compile(r"^```[a-zA-Z]*\s*\n?(?P<body>.*?)\n?```$", re.DOTALL)
_THINK = re.compile(r"^\s*<think>.*?</think>", re.DOTALL)  # reasoning models' preamble
_TAGS = re.compile(r"^<tool_call>\s*(?P<body>.*?)\s*</tool_call>$", re.DOTALL)
_MAX_DECODE_DEPTH = 3


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
        except json.JSONDecodeError:
            break
    if isinstance(value, dict):
        return value
    if value is None:
        return {}
    logger.warning("tool-call arguments are not a JSON object: %.200r", raw)
    return {UNPARSED_ARGUMENTS_KEY: raw if isinstance(raw, str) else json.dumps(raw)}


def tool_calls_from_text(text: str, offered: Collection[str]) -> tuple[ToolCall, ...]:
    """The tool calls a reply's whole text stands for, or () when it is not one.

    Accepts `{"name": X, "arguments": {...}}` (or `"parameters"`), a list of those, bare or
    wrapped in a code fence or `<tool_call>` tags, optionally after a `<think>` block; every
    call must name an offered tool.
    """
    body = _THINK.sub("", text, count=1).strip()
    for pattern in (_FENCE, _TAGS):
        match = pattern.match(body)
        if match:
            body = match.group("body").strip()
            break
    if not body.startswith(("{", "[")):
        return ()
    try:
        decoded = json.loads(body)
    except json.JSONDecodeError:
        return ()
    items = decoded if isinstance(decoded, list) else [decoded]
    calls: list[ToolCall] = []
    for item in items:
        call = _as_call(item, offered)
        if call is None:
            return ()
        calls.append(call)
    if calls:
        logger.info("recovered %d tool call(s) written as text", len(calls))
    return tuple(calls)


def _as_call(item: object, offered: Collection[str]) -> ToolCall | None:
    if not isinstance(item, dict):
        return None
    function = item.get("function")
    if isinstance(function, dict):  # {"type": "function", "function": {...}}
        item = function
    name = item.get("name")
    if not isinstance(name, str) or name not in offered:
        return None
    raw = item.get("arguments", item.get("parameters", {}))
    return ToolCall(id=f"call_{uuid.uuid4().hex[:24]}", name=name, arguments=parse_arguments(raw))
