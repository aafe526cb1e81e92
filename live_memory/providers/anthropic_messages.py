"""The Anthropic Messages wire format: a neutral ChatRequest as the parameters of
`messages.stream` (the JSON body of `POST /v1/messages`), and the SDK's reply as a ChatResponse.

Cache breakpoints become `cache_control` markers on system blocks and on the last content block
of a flagged message (at most `MAX_CACHE_BREAKPOINTS`; the earliest extras are dropped). Usage
is normalised so `input_tokens` counts every prompt token, cached or not. Pure functions: the
call, auth and retries are the adapter's (anthropic_adapter).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Literal, NotRequired, Required, TypedDict

from live_memory.config import constants
from live_memory.errors import ProviderBadResponse
from live_memory.providers.types import (
    ChatRequest,
    ChatResponse,
    StopReason,
    TextBlock,
    ToolCall,
    ToolResultBlock,
    ToolSpec,
    Usage,
)

__all__ = ["MessagesParams", "build_messages_params", "parse_message"]

logger = logging.getLogger(__name__)

_STOP_REASONS: Mapping[str, StopReason] = {
    "end_turn": "end_turn",
    "stop_sequence": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "model_context_window_exceeded": "max_tokens",
}


class CacheControlParam(TypedDict):
    type: Literal["ephemeral"]
    ttl: NotRequired[str]


ContentParam = dict[str, Any]
"""One content block as sent: text, tool_use or tool_result (maybe with cache_control)."""


class MessageParam(TypedDict):
    role: Literal["user", "assistant"]
    content: list[ContentParam]


class MessagesParams(TypedDict, total=False):
    """The JSON body of `POST /v1/messages`."""

    model: Required[str]
    max_tokens: Required[int]
    messages: Required[list[MessageParam]]
    system: list[ContentParam]
    tools: list[dict[str, Any]]
    tool_choice: dict[str, str]


def build_messages_params(request: ChatRequest) -> MessagesParams:
    """The request body for `request`."""
    control = _cache_control(request)
    marked: list[ContentParam] = []
    system: list[ContentParam] = []
    for block in request.system:
        text_param: ContentParam = {"type": "text", "text": block.text}
        if block.cache_breakpoint:
            marked.append(text_param)
        system.append(text_param)
    messages: list[MessageParam] = []
    for message in request.messages:
        blocks = message.blocks
        if len(blocks) == 1 and type(blocks[0]) is TextBlock:
            # The history's shape (one text per turn), without the general path's calls:
            # every request carries the whole history again.
            text = blocks[0].text
            content: list[ContentParam] = [{"type": "text", "text": text}] if text else []
        else:
            content = [_content_param(b) for b in blocks if not _is_empty_text(b)]
        if message.cache_breakpoint and content:
            marked.append(content[-1])
        role: Literal["user", "assistant"] = "user" if message.role == "user" else "assistant"
        messages.append({"role": role, "content": content})
    extra = len(marked) - constants.MAX_CACHE_BREAKPOINTS
    if extra > 0:
        logger.warning(
            "request asks for %d cache breakpoints, the API allows %d; dropping the first %d",
            len(marked),
            constants.MAX_CACHE_BREAKPOINTS,
            extra,
        )
    for param in marked[max(extra, 0) :]:
        param["cache_control"] = control
    params: MessagesParams = {
        "model": request.model,
        "max_tokens": request.max_tokens,
        "messages": messages,
    }
    if system:
        params["system"] = system
    if request.tools:
        params["tools"] = [_tool_param(t) for t in request.tools]
        if request.tool_choice == "any":
            params["tool_choice"] = {"type": "any"}
    return params


def _cache_control(request: ChatRequest) -> CacheControlParam:
    if request.cache_ttl is None:
        return {"type": "ephemeral"}
    return {"type": "ephemeral", "ttl": request.cache_ttl}


def _is_empty_text(block: object) -> bool:
    # The API rejects empty text blocks; an empty one carries nothing anyway.
    return isinstance(block, TextBlock) and not block.text


def _content_param(block: TextBlock | ToolCall | ToolResultBlock) -> ContentParam:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, ToolCall):
        arguments = dict(block.arguments)
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": arguments}
    result: ContentParam = {
        "type": "tool_result",
        "tool_use_id": block.tool_call_id,
        "content": block.content,
    }
    if block.is_error:
        result["is_error"] = True
    return result


def _tool_param(spec: ToolSpec) -> dict[str, Any]:
    schema = dict(spec.input_schema)  # orjson encodes dicts, not other Mappings
    return {"name": spec.name, "description": spec.description, "input_schema": schema}


def parse_message(
    message: Any, inputs: Mapping[int, object], model: str, base_url: str
) -> ChatResponse:
    """The SDK's streamed reply `message` as a ChatResponse; `inputs` are the tool calls'
    arguments by block index, decoded whole. Raises ProviderBadResponse without content or
    usage (a base URL that is not the Messages API)."""
    content = getattr(message, "content", None)
    usage = getattr(message, "usage", None)
    if not isinstance(content, list) or usage is None:
        raise ProviderBadResponse(
            f"anthropic at {base_url} answered without content or usage (is the base URL right?)"
        )
    blocks: list[TextBlock | ToolCall] = []
    for index, item in enumerate(content):
        kind = getattr(item, "type", None)
        if kind == "text" and isinstance(getattr(item, "text", None), str):
            blocks.append(TextBlock(item.text))
        elif kind == "tool_use" and isinstance(getattr(item, "id", None), str):
            arguments = inputs.get(index, getattr(item, "input", None))
            name = getattr(item, "name", None)
            blocks.append(
                ToolCall(
                    item.id,
                    name if isinstance(name, str) else "",
                    arguments if isinstance(arguments, dict) else {},
                )
            )
    raw_stop = getattr(message, "stop_reason", None)
    stop: StopReason = _STOP_REASONS.get(str(raw_stop), "other")
    if stop != "tool_use" and any(isinstance(b, ToolCall) for b in blocks):
        stop = "tool_use"
    return ChatResponse(
        blocks=tuple(blocks),
        stop_reason=stop,
        usage=_usage(usage),
        model=str(getattr(message, "model", None) or model),
        raw_stop_reason=None if raw_stop is None else str(raw_stop),
    )


def _usage(usage: object) -> Usage:
    def count(field: str) -> int:
        value = getattr(usage, field, None)
        return value if isinstance(value, int) else 0

    write = count("cache_creation_input_tokens")
    read = count("cache_read_input_tokens")
    return Usage(
        input_tokens=count("input_tokens") + write + read,
        output_tokens=count("output_tokens"),
        cache_read_tokens=read,
        cache_write_tokens=write,
    )
