"""Putting a streamed Messages reply back together from its server-sent events.

Streamed so that giving up (a deadline, a cancelled question) closes the connection and the
server stops generating, and so that the tap sees the text as it comes. The result has the
shape of a non-streamed reply (`content`, `usage`, `stop_reason`, `model`), so one parser
reads both. Events: message_start, content_block_start/delta/stop, message_delta,
message_stop, ping, error (a failure after the 200, e.g. overloaded).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from live_memory.providers.types import StreamTap

__all__ = ["StreamError", "assemble_stream", "event_lines"]


class StreamError(Exception):
    """The stream carried an `error` event: its type and message."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind, self.message = kind, message


@dataclass(slots=True)
class _Assembly:
    started: float
    tap: StreamTap | None
    message: dict[str, Any] | None = None
    blocks: dict[int, dict[str, Any]] = field(default_factory=dict)
    json_parts: dict[int, list[str]] = field(default_factory=dict)

    def add(self, event: dict[str, Any], now: float) -> None:
        kind = event.get("type")
        if kind == "message_start":
            start = event.get("message")
            self.message = dict(start) if isinstance(start, dict) else {}
        elif kind == "content_block_start":
            block = event.get("content_block")
            if isinstance(block, dict):
                self.blocks[_index(event)] = dict(block)
        elif kind == "content_block_delta":
            self._delta(_index(event), event.get("delta"), now)
        elif kind == "message_delta" and self.message is not None:
            delta = event.get("delta")
            if isinstance(delta, dict):
                self.message.update({k: v for k, v in delta.items() if v is not None})
            usage = event.get("usage")
            if isinstance(usage, dict):
                merged = dict(self.message.get("usage") or {})
                merged.update({k: v for k, v in usage.items() if v is not None})
                self.message["usage"] = merged
        elif kind == "error":
            error = event.get("error")
            error = error if isinstance(error, dict) else {}
            raise StreamError(str(error.get("type") or "error"), str(error.get("message") or ""))

    def _delta(self, index: int, delta: object, now: float) -> None:
        if not isinstance(delta, dict):
            return
        block = self.blocks.setdefault(index, {"type": "text", "text": ""})
        if delta.get("type") == "text_delta" and isinstance(delta.get("text"), str):
            text = delta["text"]
            block["text"] = block.get("text", "") + text
            if self.tap is not None and text:
                if self.tap.first_token_s is None:
                    self.tap.first_token_s = now - self.started
                self.tap.add_text(text)
        elif delta.get("type") == "input_json_delta":
            self.json_parts.setdefault(index, []).append(str(delta.get("partial_json") or ""))

    def result(self) -> dict[str, Any]:
        if self.message is None:
            # ValueError: the retry layer reports a bad response, not retried.
            raise ValueError("the stream carried no message")
        for index, parts in self.json_parts.items():
            raw = "".join(parts)
            try:
                decoded = orjson.loads(raw) if raw else {}
            except orjson.JSONDecodeError:  # cut off (max_tokens): the tool sees no arguments
                decoded = {}
            self.blocks[index]["input"] = decoded if isinstance(decoded, dict) else {}
        self.message["content"] = [self.blocks[i] for i in sorted(self.blocks)]
        return self.message


def _index(event: dict[str, Any]) -> int:
    index = event.get("index")
    return index if isinstance(index, int) else 0


async def event_lines(chunks: AsyncIterator[bytes], max_line_bytes: int) -> AsyncIterator[bytes]:
    """The lines of a byte stream. Split here rather than with httpx's text-line decoder: its
    layers of generators per chunk cost a quarter of a short question's server CPU. A line
    longer than `max_line_bytes` is a bad response (ValueError), not held."""
    pending = b""
    async for chunk in chunks:
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for line in lines:
            yield line.rstrip(b"\r")
        if len(pending) > max_line_bytes:
            raise ValueError(f"a stream line is longer than {max_line_bytes} bytes")
    if pending:
        yield pending.rstrip(b"\r")


async def assemble_stream(
    lines: AsyncIterator[bytes],
    tap: StreamTap | None,
    *,
    clock: Callable[[], float] = time.monotonic,
) -> dict[str, Any]:
    """The reply the event lines describe. Raises StreamError for an `error` event and
    ValueError for a stream without a message (or with a data line that is not JSON)."""
    if tap is not None:
        tap.reset()  # a retried attempt starts its answer afresh
    assembly = _Assembly(clock(), tap)
    async for line in lines:
        if not line.startswith(b"data:"):
            continue  # `event:` names repeat the data's type; blank lines end events
        event = orjson.loads(line[5:])
        if isinstance(event, dict):
            assembly.add(event, clock())
            if event.get("type") == "message_stop":
                break
    return assembly.result()
