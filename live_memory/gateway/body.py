"""Request bodies: size limits and JSON decoding, shared by every route."""

from __future__ import annotations

from typing import Any

import orjson
from starlette.types import Receive

from live_memory.config import constants as C
from live_memory.errors import InputError, PayloadTooLarge

__all__ = ["decode_json", "read_body"]


def _too_large(size: int | str) -> PayloadTooLarge:
    return PayloadTooLarge(f"body is {size} bytes; the limit is {C.MAX_BODY_BYTES}")


async def read_body(receive: Receive, declared_length: bytes | None) -> bytes:
    """The whole body, refusing (413) anything over MAX_BODY_BYTES before buffering it."""
    declared = declared_length or b""
    if declared.isdigit() and int(declared) > C.MAX_BODY_BYTES:
        raise _too_large(declared.decode())
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise InputError("the client disconnected before sending the whole body")
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > C.MAX_BODY_BYTES:
            raise _too_large(f"more than {size}")
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def decode_json(raw: bytes) -> Any:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise InputError(f"body is not valid JSON: {exc}") from None
