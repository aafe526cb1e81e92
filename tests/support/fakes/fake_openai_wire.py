"""The OpenAI chat-completions wire format, as the fake provider speaks it.

Request checks mirror refusals of real servers our code could trip: a `null` message content
(llama.cpp and others refuse it) and tool messages that answer no pending tool call. Streaming
sends `chat.completion.chunk`s, a usage chunk when `stream_options.include_usage`, then
`data: [DONE]`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import orjson

from tests.support.fakes.fake_replies import Error, Text, ToolUse

__all__ = [
    "completion_body",
    "error_body",
    "problem_with",
    "prompt_of",
    "stream_chunks",
    "usage_body",
]

_CHUNK_CHARS = 8
_ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})

NewId = Callable[[str], str]


def problem_with(body: dict[str, Any]) -> str | None:
    """Why a strict compatible server would refuse this body with a 400, or None."""
    if not isinstance(body.get("model"), str):
        return "model is required"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages must be a non-empty array"
    pending: set[str] = set()
    for index, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        if role not in _ROLES:
            return f"messages[{index}].role must be one of {sorted(_ROLES)}"
        if "content" in message and message["content"] is None:
            return f"messages[{index}].content must not be null"
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in pending:
                return f"messages[{index}]: tool_call_id {call_id!r} answers no pending tool call"
            pending.discard(call_id)
            continue
        if pending:
            return f"messages[{index}]: tool calls {sorted(pending)} were not answered"
        if role == "assistant":
            pending = {str(c.get("id")) for c in message.get("tool_calls") or []}
    return None


def prompt_of(body: dict[str, Any]) -> bytes:
    """The prompt as canonical bytes: tools, then each message, in order."""
    parts = [orjson.dumps(t, option=orjson.OPT_SORT_KEYS) for t in body.get("tools") or []]
    parts += [orjson.dumps(m, option=orjson.OPT_SORT_KEYS) for m in body.get("messages") or []]
    return b"".join(parts)


def completion_body(
    reply: Text | ToolUse, model: str, usage: dict[str, Any], new_id: NewId
) -> dict[str, Any]:
    """A complete non-streaming chat completion."""
    message: dict[str, Any] = {"role": "assistant", "content": _text(reply) or None}
    calls = _tool_calls(reply, new_id)
    if calls:
        message["tool_calls"] = calls
    return {
        "id": new_id("chatcmpl"),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {"index": 0, "message": message, "finish_reason": _finish(reply), "logprobs": None}
        ],
        "usage": usage,
    }


def stream_chunks(
    reply: Text | ToolUse,
    model: str,
    usage: dict[str, Any],
    new_id: NewId,
    *,
    include_usage: bool,
) -> Iterator[bytes]:
    """The same answer as `data:` chunks ending in `data: [DONE]`."""
    chunk_id, created = new_id("chatcmpl"), int(time.time())

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        data: dict[str, Any] = {
            "id": chunk_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
        }
        if include_usage:
            data["usage"] = None
        return _data(data)

    yield chunk({"role": "assistant", "content": ""})
    for piece in _chunks(_text(reply)) if _text(reply) else []:
        yield chunk({"content": piece})
    for index, call in enumerate(_tool_calls(reply, new_id)):
        head = {**call, "function": {"name": call["function"]["name"], "arguments": ""}}
        yield chunk({"tool_calls": [{"index": index, **head}]})
        for piece in _chunks(call["function"]["arguments"]):
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    yield chunk({}, _finish(reply))
    if include_usage:
        tail = {
            "id": chunk_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [],
            "usage": usage,
        }
        yield _data(tail)
    yield b"data: [DONE]\n\n"


def usage_body(reply: Text | ToolUse, total: int, cached: int, *, deepseek: bool) -> dict[str, Any]:
    """Usage as OpenAI reports it, or the DeepSeek way (`prompt_cache_hit/miss_tokens`)."""
    calls = [] if isinstance(reply, Text) else [(c.name, dict(c.arguments)) for c in reply.calls]
    output = max(1, len(orjson.dumps([reply.text, calls])) // 4)
    usage: dict[str, Any] = {
        "prompt_tokens": total,
        "completion_tokens": output,
        "total_tokens": total + output,
    }
    if deepseek:
        usage["prompt_cache_hit_tokens"] = cached
        usage["prompt_cache_miss_tokens"] = total - cached
    else:
        usage["prompt_tokens_details"] = {"cached_tokens": cached}
    return usage


def error_body(error: Error) -> dict[str, Any]:
    return {"error": {"message": error.message, "type": error.type, "param": None, "code": None}}


def _text(reply: Text | ToolUse) -> str:
    return reply.text


def _tool_calls(reply: Text | ToolUse, new_id: NewId) -> list[dict[str, Any]]:
    if isinstance(reply, Text):
        return []
    return [
        {
            "id": new_id("call"),
            "type": "function",
            "function": {"name": c.name, "arguments": orjson.dumps(dict(c.arguments)).decode()},
        }
        for c in reply.calls
    ]


def _finish(reply: Text | ToolUse) -> str:
    if isinstance(reply, ToolUse):
        return "tool_calls"
    return "length" if reply.truncated else "stop"


def _chunks(text: str) -> list[str]:
    return [text[i : i + _CHUNK_CHARS] for i in range(0, len(text), _CHUNK_CHARS)] or [""]


def _data(payload: dict[str, Any]) -> bytes:
    return b"data: " + orjson.dumps(payload) + b"\n\n"
