"""`POST /notify` answered inside the HTTP protocol, without an ASGI request.

Hooks open a new connection per file event, so this is the server's hottest request. For the
common case — the Guard lets the head pass, the body has a declared Content-Length within
LIVE_MEMORY_MAX_BODY_BYTES, the body is valid and names a workspace this edge holds a handle
for — the protocol (gateway/http_limits) collects the body itself and writes the reply in one
send: no task, no ASGI scope, no middleware stack, no second write for the body.

Anything else goes the ordinary way (uvicorn, Starlette, NotifyFastPath): a refused head, a
chunked body, `Expect: 100-continue`, a bad body, the first notification for a workspace
name. So every error reply and every count the actor itself makes stays the one the routes
give; this path only ever answers 200.
"""

from __future__ import annotations

import orjson
from starlette.datastructures import State

from live_memory.errors import LiveMemoryError
from live_memory.gateway.guard import GuardRules
from live_memory.gateway.notify_fast_path import NOTIFY_PATH

__all__ = ["DirectNotify", "direct_notify_of"]

_REPLAYED_HEADERS = frozenset({b"transfer-encoding", b"expect"})


class DirectNotify:
    """What the protocol asks: may this head go the direct way, and what is the reply."""

    def __init__(self, state: State, rules: GuardRules) -> None:
        self._state = state
        """The app's state: `service` appears there when the lifespan has started."""
        self._rules = rules

    def body_length(
        self,
        method: bytes,
        headers: list[tuple[bytes, bytes]],
        scheme: str,
        server: tuple[str, int | None] | None,
    ) -> int | None:
        """The body bytes to collect for the direct path, or None: the ordinary way."""
        service = getattr(self._state, "service", None)
        if method != b"POST" or service is None:
            return None
        declared: bytes | None = None
        for name, value in headers:
            if name == b"content-length":
                if declared is not None:
                    return None
                declared = value
            elif name in _REPLAYED_HEADERS:
                return None
        if declared is None or not declared.isdigit():
            return None
        length = int(declared)
        if length > service.settings.max_body_bytes:
            return None  # the route answers 413 (and drains the body)
        if self._rules.refusal("POST", NOTIFY_PATH, headers, scheme, server) is not None:
            return None  # the Guard answers it
        return length

    def answer(self, body: bytes) -> bytes | None:
        """The 200 reply's JSON, or None: replay the request the ordinary way (nothing was
        handed to a workspace then)."""
        try:
            outcome = self._state.service.notify_held(orjson.loads(body))
        except (orjson.JSONDecodeError, LiveMemoryError):  # the route's error reply
            return None
        if outcome is None:
            return None
        return orjson.dumps({"accepted": outcome.accepted, "ignored": outcome.ignored})


def direct_notify_of(app: object) -> DirectNotify | None:
    """The direct /notify handler `create_app` put on the app's state, if any."""
    direct = getattr(getattr(app, "state", None), "direct_notify", None)
    return direct if isinstance(direct, DirectNotify) else None
