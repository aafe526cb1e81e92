"""A streamed Messages reply put back together by the adapter (on the SDK's `messages.stream`):
text, tool input, usage and stop come back whole; an `error` event after the 200 is classified
by its type (an overloaded stream is retried); a stream without a message is a bad response.

The server here sends hand-written event streams, which the shared fake never would.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import orjson
import pytest

from live_memory.errors import ProviderBadResponse
from live_memory.providers import AnthropicProvider, ChatRequest, Message, StreamTap, TextBlock
from live_memory.providers.retry import RetryPolicy
from tests.providers.conftest import SleepRecorder

Event = dict[str, Any]
START: Event = {
    "type": "message_start",
    "message": {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [],
        "stop_reason": None,
        "usage": {"input_tokens": 7, "output_tokens": 1},
    },
}
STOP: Event = {"type": "message_stop"}


def _tool_events(partial_json: Sequence[str], stop_reason: str) -> list[Event]:
    return [
        START,
        {"type": "ping"},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "He"}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "y"}},
        {"type": "content_block_stop", "index": 0},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "tool_use", "id": "t1", "name": "Read", "input": {}},
        },
        *(
            {
                "type": "content_block_delta",
                "index": 1,
                "delta": {"type": "input_json_delta", "partial_json": part},
            }
            for part in partial_json
        ),
        {"type": "content_block_stop", "index": 1},
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason},
            "usage": {"output_tokens": 9},
        },
        STOP,
    ]


async def _serve(replies: list[list[Event]], seen: list[int]) -> asyncio.Server:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(
            int(line.split(b":", 1)[1])
            for line in head.lower().split(b"\r\n")
            if line.startswith(b"content-length:")
        )
        await reader.readexactly(length)
        seen.append(1)
        events = replies.pop(0)
        body = b"".join(
            b"event: %s\r\ndata: %s\r\n\r\n" % (str(e["type"]).encode(), orjson.dumps(e))
            for e in events
        )
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n"
            b"content-length: %d\r\n\r\n%s" % (len(body), body)
        )
        await writer.drain()
        writer.close()

    return await asyncio.start_server(handle, "127.0.0.1", 0)


def _chat(
    replies: list[list[Event]], tap: StreamTap | None = None
) -> tuple[Any, int, SleepRecorder]:
    sleep = SleepRecorder()
    seen: list[int] = []

    async def run() -> Any:
        server = await _serve(replies, seen)
        url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
        policy = RetryPolicy(retries=2, base_delay_s=0.01, jitter=0.0)
        provider = AnthropicProvider(url, "test-key", retry=policy, sleep=sleep)
        question = (Message("user", (TextBlock("q"),)),)
        try:
            return await provider.chat(ChatRequest("m", (), question, (), 64, tap=tap))
        finally:
            await provider.aclose()
            server.close()

    return asyncio.run(run()), len(seen), sleep


def test_text_and_tool_input_come_back_whole_with_the_final_usage_and_stop() -> None:
    tap = StreamTap()

    reply, _, _ = _chat([_tool_events(['{"file_', 'path": "a.py"}'], "tool_use")], tap)

    assert reply.text == "Hey"
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [
        ("t1", "Read", {"file_path": "a.py"})
    ]
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (7, 9)
    assert reply.stop_reason == "tool_use"
    assert tap.text == "Hey"
    assert tap.first_token_s is not None


def test_a_tool_call_cut_off_by_max_tokens_gets_no_arguments_not_a_partial_guess() -> None:
    reply, _, _ = _chat([_tool_events(['{"file_path": "src/ap'], "max_tokens")])

    assert [c.arguments for c in reply.tool_calls] == [{}]
    assert reply.raw_stop_reason == "max_tokens"


def test_an_overloaded_error_event_after_the_200_is_retried_like_an_overloaded_answer() -> None:
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}

    reply, requests, sleep = _chat([[START, error], _tool_events(["{}"], "tool_use")])

    assert reply.text == "Hey"
    assert requests == 2
    assert sleep.delays == [0.01]


def test_a_stream_without_a_message_is_a_bad_response_not_retried() -> None:
    with pytest.raises(ProviderBadResponse, match="not a valid response"):
        _chat([[{"type": "ping"}], _tool_events(["{}"], "tool_use")])
