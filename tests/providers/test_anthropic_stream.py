"""Putting a streamed Messages reply back together (pure: event lines in, reply dict out)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import orjson
import pytest

from live_memory.providers import StreamTap
from live_memory.providers.anthropic_stream import StreamError, assemble_stream, event_lines


def _lines(*events: dict[str, object]) -> AsyncIterator[bytes]:
    # Cut into odd-sized chunks: lines are split across them, as over a socket.
    text = b"".join(
        b"event: %s\r\ndata: %s\r\n\r\n" % (str(e["type"]).encode(), orjson.dumps(e))
        for e in events
    )

    async def chunks() -> AsyncIterator[bytes]:
        for at in range(0, len(text), 7):
            yield text[at : at + 7]

    return event_lines(chunks(), 1024)


START = {
    "type": "message_start",
    "message": {"model": "m", "content": [], "usage": {"input_tokens": 7, "output_tokens": 1}},
}


def test_text_and_tool_input_come_back_whole_with_the_final_usage_and_stop() -> None:
    tap = StreamTap()
    events = [
        START,
        {"type": "ping"},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "He"}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "y"}},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "tool_use", "id": "t1", "name": "Read", "input": {}},
        },
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": '{"file_'},
        },
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": 'path": "a.py"}'},
        },
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use"},
            "usage": {"output_tokens": 9},
        },
        {"type": "message_stop"},
    ]

    reply = asyncio.run(assemble_stream(_lines(*events), tap))

    assert reply["content"] == [
        {"type": "text", "text": "Hey"},
        {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "a.py"}},
    ]
    assert reply["usage"] == {"input_tokens": 7, "output_tokens": 9}
    assert reply["stop_reason"] == "tool_use"
    assert tap.text == "Hey"
    assert tap.first_token_s is not None


def test_an_error_event_after_the_200_is_a_stream_error_naming_its_type() -> None:
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}

    with pytest.raises(StreamError) as caught:
        asyncio.run(assemble_stream(_lines(START, error), None))

    assert (caught.value.kind, caught.value.message) == ("overloaded_error", "Overloaded")


def test_a_stream_without_a_message_is_a_bad_reply() -> None:
    with pytest.raises(ValueError, match="no message"):
        asyncio.run(assemble_stream(_lines({"type": "ping"}), None))


def test_a_line_past_the_cap_is_a_bad_reply_not_held() -> None:
    async def endless() -> AsyncIterator[bytes]:
        while True:
            yield b"x" * 100

    async def read() -> None:
        async for _ in event_lines(endless(), 1000):
            pass

    with pytest.raises(ValueError, match="longer than 1000 bytes"):
        asyncio.run(read())
