"""`POST /notify` as a bare ASGI handler.

Hooks call it on every file the agent touches, so it skips the router, Request and Response
objects: read the body, hand the parsed events to the workspace actor, write the JSON reply.
"""

from __future__ import annotations

import orjson
from starlette.types import ASGIApp, Receive, Scope, Send

from live_memory.errors import LiveMemoryError
from live_memory.gateway.body import decode_json, read_body
from live_memory.gateway.error_map import error_payload

__all__ = ["NOTIFY_PATH", "NotifyFastPath"]

NOTIFY_PATH = "/notify"
_JSON_HEADERS = [(b"content-type", b"application/json")]


class NotifyFastPath:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != NOTIFY_PATH:
            await self.app(scope, receive, send)
            return
        if scope["method"] != "POST":
            status, payload = 405, {"error": "use POST /notify"}
        else:
            try:
                service = scope["app"].state.service
                body = decode_json(await read_body(scope, receive, service.settings))
                outcome = await service.notify(body)
                status = 200
                payload = {"accepted": outcome.accepted, "ignored": outcome.ignored}
            except (LiveMemoryError, TimeoutError) as exc:
                status, payload = error_payload(exc)
        data = orjson.dumps(payload)
        headers = [*_JSON_HEADERS, (b"content-length", str(len(data)).encode())]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": data})
