"""An OpenAI-compatible reply, streamed or not, as a neutral ChatResponse.

Tool calls come from the structured `tool_calls`, or else from call-shaped text (small local
models write them as text; see `text_tool_call`). Usage and timings come from `server_timings`.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import replace

from live_memory.config import constants
from live_memory.errors import ProviderBadResponse
from live_memory.providers.openai_stream import StreamAssembly
from live_memory.providers.server_timings import timings_of, usage_of
from live_memory.providers.text_tool_call import parse_arguments, read_text_reply
from live_memory.providers.types import (
    CallTimings,
    ChatRequest,
    ChatResponse,
    StopReason,
    TextBlock,
    ToolCall,
    ToolSpec,
    Usage,
)

__all__ = ["parse_completion", "parse_stream"]

_STOP_REASONS: Mapping[str, StopReason] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
}


def parse_completion(
    completion: object, request: ChatRequest, base_url: str, started: float
) -> ChatResponse:
    choices = getattr(completion, "choices", None)
    if not isinstance(choices, list) or not choices:
        raise ProviderBadResponse(
            f"openai-compatible endpoint {base_url} answered without choices "
            "(is the base URL right? it usually ends in /v1)"
        )
    choice = choices[0]
    message = getattr(choice, "message", None)
    raw_calls = [
        (getattr(item, "id", None) or f"call_{index}", item.function.name, item.function.arguments)
        for index, item in enumerate(getattr(message, "tool_calls", None) or [])
        if getattr(item, "function", None) is not None
    ]
    extra: Mapping[str, object] = getattr(completion, "model_extra", None) or {}
    raw_timings = extra.get("timings")
    timings = raw_timings if isinstance(raw_timings, dict) else None
    usage = usage_of(getattr(completion, "usage", None), timings)
    return _response(
        text=getattr(message, "content", None) or "",
        raw_calls=raw_calls,
        raw_stop=getattr(choice, "finish_reason", None),
        usage=usage,
        model=str(getattr(completion, "model", None) or request.model),
        offered=request.tools,
        timings=timings_of(
            timings,
            usage,
            first_token_s=None,
            wall_s=time.monotonic() - started,
        ),
    )


def parse_stream(assembly: StreamAssembly, request: ChatRequest) -> ChatResponse:
    if assembly.chunks == 0:
        # ValueError: the retry layer reports it as a bad response, not retried.
        raise ValueError("the stream carried no chat.completion chunk")
    estimated = assembly.usage is None and not assembly.timings
    if estimated:
        # A stream without a usage chunk (llama-cpp-python): prompt from its size, output
        # from the pieces streamed (about one token each); counted as unreported cache use.
        prompt = int(request.prompt_chars() / constants.CHARS_PER_TOKEN)
        usage = Usage(prompt, assembly.pieces, cache_unreported_tokens=prompt)
    else:
        usage = usage_of(assembly.usage, assembly.timings)
    wall = time.monotonic() - assembly.started
    response = _response(
        text=assembly.answer_text,
        raw_calls=assembly.tool_calls(),
        raw_stop=assembly.finish_reason,
        usage=usage,
        model=assembly.model or request.model,
        offered=request.tools,
        timings=timings_of(
            assembly.timings, usage, first_token_s=assembly.first_token_s(), wall_s=wall
        ),
    )
    return replace(response, usage_estimated=estimated)


def _response(
    *,
    text: str,
    raw_calls: Sequence[tuple[str, str, object]],
    raw_stop: object,
    usage: Usage,
    model: str,
    offered: Sequence[ToolSpec],
    timings: CallTimings,
) -> ChatResponse:
    calls = [ToolCall(i, name, parse_arguments(args)) for i, name, args in raw_calls]
    if not calls and offered and text:
        reading = read_text_reply(text, offered)  # a local model's call written as text
        if reading.calls:
            calls, text = list(reading.calls), reading.prose
    stop: StopReason = "tool_use" if calls else _STOP_REASONS.get(str(raw_stop), "other")
    blocks: list[TextBlock | ToolCall] = [TextBlock(text)] if text else []
    blocks.extend(calls)
    return ChatResponse(
        blocks=tuple(blocks),
        stop_reason=stop,
        usage=usage,
        model=model,
        raw_stop_reason=None if raw_stop is None else str(raw_stop),
        timings=timings,
    )
