"""A response's head and the start of its body in one send.

uvicorn writes a response's status line and headers the moment the app sends
`http.response.start`, and its body with the next message: two `send` calls on the socket for
every response, and a client that wakes for the head only to wait for the body (on loopback
the first send also wakes the client's thread while ours still holds the GIL). An app such as
Starlette's `Response` sends both in the same turn of the event loop, so `HeadWithBody`, the
transport a request's cycle writes through, keeps the head until the next write and sends the
two together; if no write follows within the turn (a stream that sends its first event later)
the head goes out on its own at the start of the next turn. Everything but `write` and `close`
is the connection's transport.
"""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["HeadWithBody"]


class HeadWithBody:
    """`transport` with its first write held until the second (or the next loop turn)."""

    __slots__ = ("_held", "_loop", "_transport")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._held: bytes | None = b""
        """b"" before the first write, its bytes while held, None once sent."""

    def write(self, data: bytes) -> None:
        held = self._held
        if held is None:
            self._transport.write(data)
        elif held:
            self._held = None
            self._transport.write(held + data)
        else:
            self._held = bytes(data)
            self._loop.call_soon(self._flush)

    def close(self) -> None:
        self._flush()
        self._transport.close()

    def _flush(self) -> None:
        held, self._held = self._held, None
        if held and not self._transport.is_closing():
            self._transport.write(held)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)
