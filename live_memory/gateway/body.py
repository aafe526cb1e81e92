"""Request bodies: size and time limits and JSON decoding, shared by every route.

The time limit bounds the whole request: head and body are due within
LIVE_MEMORY_REQUEST_TIMEOUT_S of the request's first byte (the HTTP protocol, gateway/http_limits,
puts that deadline in the scope as REQUEST_DEADLINE). Counted from the end of the head, a head
dribbled for 10 s bought its body 10 s more (a 408 at 20 s).
"""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
from starlette.types import Receive, Scope

from live_memory.config import Settings
from live_memory.config import constants as C
from live_memory.errors import InputError, PayloadTooLarge, RequestTimeout
from live_memory.gateway.held_requests import held_requests_of

__all__ = ["REQUEST_DEADLINE", "decode_json", "read_body"]

REQUEST_DEADLINE = "live_memory.request"
"""ASGI scope extension `{"deadline": loop time}`: when the whole request is due."""


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


async def read_body(scope: Scope, receive: Receive, settings: Settings) -> bytes:
    """The whole body: refused (413) over LIVE_MEMORY_MAX_BODY_BYTES before it is buffered,
    and (408) when the request is not whole within LIVE_MEMORY_REQUEST_TIMEOUT_S of its first
    byte, or when the server sheds it to make room for another connection (held_requests).
    A refused body is drained (not kept) so the client can read the 413."""
    limit = settings.max_body_bytes
    declared = next((v for k, v in scope["headers"] if k == b"content-length"), b"")
    loop = asyncio.get_running_loop()
    deadline = scope.get("extensions", {}).get(REQUEST_DEADLINE, {}).get("deadline")
    if deadline is None:  # served without our protocol (tests): from the end of the head
        deadline = loop.time() + settings.request_timeout_s
    held = held_requests_of(scope)
    shed: list[bool] = []
    chunks: list[bytes] = []
    size = 0
    try:
        async with asyncio.timeout_at(deadline) as timer:
            if held is not None:

                def shed_now() -> None:
                    shed.append(True)
                    timer.reschedule(loop.time())

                held.hold(timer, shed_now)
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
        if shed:
            raise RequestTimeout(
                "the body was still arriving when the server needed the connection for "
                f"another client (LIVE_MEMORY_MAX_CONNECTIONS {settings.max_connections})"
            ) from None
        raise RequestTimeout(
            f"the request did not arrive within LIVE_MEMORY_REQUEST_TIMEOUT_S "
            f"({settings.request_timeout_s:g} s)"
        ) from None
    finally:
        if held is not None:
            held.release(timer)


def decode_json(raw: bytes) -> Any:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise InputError(f"body is not valid JSON: {exc}") from None
