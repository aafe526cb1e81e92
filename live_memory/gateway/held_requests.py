"""Requests that hold a connection at their client's pace, shed oldest first when a newcomer
needs the connection: `GET /mcp` event streams and request bodies still arriving.

A stateless MCP server never writes to a `GET /mcp` stream (sse-starlette pings it every
15 s), and a half-sent body waits on its client. Both are parsed requests in progress, so
700 held streams, or 600 half-sent bodies re-opened as they timed out, filled the connection
table and every newcomer was refused, `/health` included. Now the HTTP protocol
(gateway/http_limits), finding no idle connection to close at its cap, calls `shed_oldest`:
a stream's response gets its clean end (the last chunk, as at a server shutdown), a body its
408, and the newcomer is served. Questions being answered are never registered here.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["HeldRequests", "held_requests_of", "serve_stream"]

logger = logging.getLogger(__name__)

_END: Message = {"type": "http.response.body", "body": b"", "more_body": False}


class HeldRequests:
    """The held requests of one app, oldest first; each with the call that sheds it."""

    def __init__(self) -> None:
        self._held: dict[object, Callable[[], None]] = {}  # insertion order: oldest first

    def __len__(self) -> int:
        return len(self._held)

    def hold(self, key: object, shed: Callable[[], None]) -> None:
        self._held[key] = shed

    def release(self, key: object) -> None:
        self._held.pop(key, None)

    def shed_oldest(self) -> bool:
        """Shed the oldest held request (it ends on the next loop turns); False when none."""
        key = next(iter(self._held), None)
        if key is None:
            return False
        self._held.pop(key)()
        return True


def held_requests_of(scope_or_app: object) -> HeldRequests | None:
    """The registry `create_app` put on the app's state (an app, or a request's scope)."""
    app = scope_or_app.get("app") if isinstance(scope_or_app, dict) else scope_or_app
    held = getattr(getattr(app, "state", None), "held_requests", None)
    return held if isinstance(held, HeldRequests) else None


async def serve_stream(app: ASGIApp, scope: Scope, receive: Receive, send: Send) -> None:
    """Serve an event stream that the app's HeldRequests may shed: its task is cancelled and
    the response ended cleanly (uvicorn writes the last chunk; the connection stays usable)."""
    held = held_requests_of(scope)
    task = asyncio.current_task()
    if held is None or task is None:
        await app(scope, receive, send)
        return
    shed = started = ended = False

    def end() -> None:
        nonlocal shed
        shed = True
        task.cancel()

    async def watched(message: Message) -> None:
        nonlocal started, ended
        started = True
        ended = message["type"] == "http.response.body" and not message.get("more_body", False)
        await send(message)

    key = object()
    held.hold(key, end)
    try:
        await app(scope, receive, watched)
    except asyncio.CancelledError:
        if not shed or task.uncancel() > 0:
            raise  # not ours (shutdown), or cancelled again meanwhile
    finally:
        held.release(key)
    if shed:
        logger.debug("an idle event stream was ended to make room for a new connection")
        if not started:
            await send({"type": "http.response.start", "status": 503, "headers": []})
        if not ended:
            await send(_END)
