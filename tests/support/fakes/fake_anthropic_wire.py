"""The Anthropic Messages wire format, as the fake provider speaks it.

Request checks mirror the real API's refusals that our code could trip (too many cache
markers, empty text blocks, unpaired tool_use / tool_result); responses and SSE events follow
the documented shapes (message_start, content_block_start/delta/stop, message_delta,
message_stop, ping).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import orjson

from tests.support.fakes.fake_cache import AnthropicCacheUsage
from tests.support.fakes.fake_replies import Error, Text, ToolUse

__all__ = ["error_body", "message_body", "problem_with", "prompt_of", "sse_events"]

MAX_CACHE_MARKERS = 4
_CHUNK_CHARS = 8  # stream text and JSON in small pieces, as the real API does

NewId = Callable[[str], str]


def problem_with(body: dict[str, Any]) -> str | None:
    """Why the real API would refuse this body with a 400, or None."""
    if not isinstance(body.get("model"), str) or not isinstance(body.get("max_tokens"), int):
        return "model: Field required; max_tokens: Field required"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    _, markers = prompt_of(body)
    if len(markers) > MAX_CACHE_MARKERS:
        return f"A maximum of 4 blocks with cache_control may be provided. Found {len(markers)}."
    previous_uses: set[str] = set()
    for index, message in enumerate(messages):
        blocks = _blocks(message.get("content"))
        for block in blocks:
            if block.get("type") == "text" and not block.get("text"):
                return f"messages.{index}: text content blocks must be non-empty"
        results = {b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"}
        if results - previous_uses:
            return (
                f"messages.{index}: unexpected `tool_use_id` found in `tool_result` blocks: "
                f"{sorted(map(str, results - previous_uses))}. Each `tool_result` block must "
                "have a corresponding `tool_use` block in the previous message."
            )
        if previous_uses - results:
            return (
                f"messages.{index}: `tool_use` ids were found without `tool_result` blocks "
                f"immediately after: {sorted(previous_uses - results)}"
            )
        uses = {str(b.get("id")) for b in blocks if b.get("type") == "tool_use"}
        previous_uses = uses if message.get("role") == "assistant" else set()
    return None


def prompt_of(body: dict[str, Any]) -> tuple[bytes, list[int]]:
    """The prompt as canonical bytes (tools, system, messages; markers excluded) and the byte
    offsets just after each block that carries a cache_control marker."""
    parts: list[bytes] = []
    markers: list[int] = []
    size = 0

    def add(block: dict[str, Any], **extra: object) -> None:
        nonlocal size
        marked = "cache_control" in block
        clean = {k: v for k, v in block.items() if k != "cache_control"}
        part = orjson.dumps({**clean, **extra}, option=orjson.OPT_SORT_KEYS)
        parts.append(part)
        size += len(part)
        if marked:
            markers.append(size)

    for tool in body.get("tools") or []:
        add(tool)
    for block in _blocks(body.get("system")):
        add(block, role="system")
    for message in body.get("messages") or []:
        for block in _blocks(message.get("content")):
            add(block, role=message.get("role"))
    if "cache_control" in body and size:  # automatic caching marks the last block
        markers.append(size)
    return b"".join(parts), markers


def message_body(
    reply: Text | ToolUse, model: str, usage: AnthropicCacheUsage, new_id: NewId, *, empty: bool
) -> dict[str, Any]:
    """A complete non-streaming Messages response."""
    content = [] if empty else _content(reply, new_id)
    return {
        "id": new_id("msg"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": _stop_reason(reply, empty),
        "stop_sequence": None,
        "usage": {**_usage(usage), "output_tokens": _output_tokens(content)},
    }


def sse_events(
    reply: Text | ToolUse, model: str, usage: AnthropicCacheUsage, new_id: NewId, *, empty: bool
) -> Iterator[bytes]:
    """The same answer as a stream of server-sent events."""
    content = [] if empty else _content(reply, new_id)
    start: dict[str, Any] = {
        "id": new_id("msg"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {**_usage(usage), "output_tokens": 1},
    }
    yield _event("message_start", {"type": "message_start", "message": start})
    yield _event("ping", {"type": "ping"})
    for index, block in enumerate(content):
        if block["type"] == "text":
            opening: dict[str, Any] = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": c} for c in _chunks(block["text"])]
        else:
            opening = {**block, "input": {}}
            raw = orjson.dumps(block["input"]).decode()
            deltas = [{"type": "input_json_delta", "partial_json": c} for c in ["", *_chunks(raw)]]
        yield _event(
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": opening},
        )
        for delta in deltas:
            yield _event(
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            )
        yield _event("content_block_stop", {"type": "content_block_stop", "index": index})
    final = {"stop_reason": _stop_reason(reply, empty), "stop_sequence": None}
    yield _event(
        "message_delta",
        {
            "type": "message_delta",
            "delta": final,
            "usage": {"output_tokens": _output_tokens(content)},
        },
    )
    yield _event("message_stop", {"type": "message_stop"})


def error_body(error: Error) -> dict[str, Any]:
    return {"type": "error", "error": {"type": error.type, "message": error.message}}


def _blocks(content: object) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def _content(reply: Text | ToolUse, new_id: NewId) -> list[dict[str, Any]]:
    if isinstance(reply, Text):
        return [{"type": "text", "text": reply.text}]
    content: list[dict[str, Any]] = [{"type": "text", "text": reply.text}] if reply.text else []
    for call in reply.calls:
        content.append(
            {
                "type": "tool_use",
                "id": new_id("toolu"),
                "name": call.name,
                "input": dict(call.arguments),
            }
        )
    return content


def _stop_reason(reply: Text | ToolUse, empty: bool) -> str:
    if empty or (isinstance(reply, Text) and reply.truncated):
        return "max_tokens"
    return "tool_use" if isinstance(reply, ToolUse) else "end_turn"


def _usage(usage: AnthropicCacheUsage) -> dict[str, int]:
    return {
        "input_tokens": usage.input_tokens,
        "cache_creation_input_tokens": usage.cache_creation_input_tokens,
        "cache_read_input_tokens": usage.cache_read_input_tokens,
    }


def _output_tokens(content: list[dict[str, Any]]) -> int:
    return max(1, len(orjson.dumps(content)) // 4) if content else 0


def _chunks(text: str) -> list[str]:
    return [text[i : i + _CHUNK_CHARS] for i in range(0, len(text), _CHUNK_CHARS)] or [""]


def _event(name: str, data: dict[str, Any]) -> bytes:
    return b"event: " + name.encode() + b"\ndata: " + orjson.dumps(data) + b"\n\n"
