"""Request bodies: size and time limits and JSON decoding, shared by every route."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
from starlette.types import Receive

from live_memory.config import Settings
from live_memory.config import constants as C
from live_memory.errors import InputError, PayloadTooLarge, RequestTimeout

__all__ = ["decode_json", "read_body"]


def _too_large(size: int | str, limit: int) -> PayloadTooLarge:
    return PayloadTooLarge(f"body is {size} bytes; LIVE_MEMORY_MAX_BODY_BYTES is {limit}")


async def _drain(receive: Receive, more: bool) -> None:
    """Read and drop the rest of a refused body, up to BODY_DRAIN_MAX_BYTES.

    Closing a socket whose receive buffer still holds unread bytes makes the kernel send a
    reset, and the client (still writing its 9 MiB) then loses the 413 it was about to
    read; a drained connection closes cleanly, or stays open for the next request.
    """
    drained = 0
    while more and drained <= C.BODY_DRAIN_MAX_BYTES:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
        drained += len(message.get("body", b""))
        more = bool(message.get("more_body", False))


async def read_body(receive: Receive, declared_length: bytes | None, settings: Settings) -> bytes:
    """The whole body: refused (413) over LIVE_MEMORY_MAX_BODY_BYTES before it is buffered,
    and (408) when the client takes longer than LIVE_MEMORY_REQUEST_TIMEOUT_S to send it.
    A refused body is drained (not kept) so the client can read the 413."""
    limit = settings.max_body_bytes
    declared = declared_length or b""
    chunks: list[bytes] = []
    size = 0
    try:
        async with asyncio.timeout(settings.request_timeout_s):
            if declared.isdigit() and int(declared) > limit:
                await _drain(receive, more=True)
                raise _too_large(declared.decode(), limit)
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    raise InputError("the client disconnected before sending the whole body")
                chunk = message.get("body", b"")
                size += len(chunk)
                more = bool(message.get("more_body", False))
                if size > limit:
                    chunks.clear()
                    await _drain(receive, more)
                    raise _too_large(f"more than {size}", limit)
                chunks.append(chunk)
                if not more:
                    return b"".join(chunks)
    except TimeoutError:
        raise RequestTimeout(
            f"the body did not arrive within LIVE_MEMORY_REQUEST_TIMEOUT_S "
            f"({settings.request_timeout_s:g} s)"
        ) from None


def decode_json(raw: bytes) -> Any:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise InputError(f"body is not valid JSON: {exc}") from None
