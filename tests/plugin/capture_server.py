"""A real loopback HTTP server that records every request and answers as a test tells it.

Stands in for the live-memory server where a test needs to see exactly what a hook script or
the CLI sent (the body, the headers) or needs a chosen answer (a 500, a 404). Runs uvicorn in a
thread on a chosen or ephemeral port; waits are bounded and use a condition, never sleeps.

It proves itself as the user's server does (publishes an identity, answers GET /identity,
which is not recorded), unless `proves=False`: then it is a squatter, recording /identity
like any other request, and clients must send it nothing else.
"""

from __future__ import annotations

import json
import os
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from live_memory.server_identity import CHALLENGE_HEADER, IDENTITY_PATH, ServerIdentity
from tests.support.background_server import BackgroundServer

__all__ = ["CaptureServer", "Seen", "closed_port"]

Responder = Callable[["Seen"], tuple[int, object]]


@dataclass(frozen=True)
class Seen:
    """One request as the server received it."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes = field(repr=False)

    def json(self) -> object:
        return json.loads(self.body)


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _default_responder(seen: Seen) -> tuple[int, object]:
    return 200, {"accepted": 1, "ignored": 0}


class CaptureServer:
    """`with CaptureServer() as server:` then `server.port`, `server.wait_for(n)`."""

    def __init__(
        self, port: int = 0, respond: Responder = _default_responder, *, proves: bool = True
    ) -> None:
        self.respond = respond
        self.requests: list[Seen] = []
        self._changed = threading.Condition()
        self._identity = ServerIdentity() if proves else None
        self._published: Path | None = None
        routes = [Route("/{path:path}", self._handle, methods=["GET", "POST"])]
        if proves:
            routes.insert(0, Route(IDENTITY_PATH, self._prove, methods=["GET"]))
        self._server = BackgroundServer(Starlette(routes=routes), port)
        self.port = 0

    async def _prove(self, request: Request) -> Response:
        assert self._identity is not None and request.client is not None
        server = request.scope["server"]
        nonce = request.headers.get(CHALLENGE_HEADER, "")
        answer = self._identity.answer(nonce, (request.client.host, request.client.port), server)
        return JSONResponse(answer, status_code=200 if answer else 400)

    async def _handle(self, request: Request) -> Response:
        seen = Seen(
            method=request.method,
            path=request.url.path,
            query=dict(request.query_params),
            headers={k.lower(): v for k, v in request.headers.items()},
            body=await request.body(),
        )
        with self._changed:
            self.requests.append(seen)
            self._changed.notify_all()
        status, payload = self.respond(seen)
        if isinstance(payload, str):
            return PlainTextResponse(payload, status_code=status)
        return JSONResponse(payload, status_code=status)

    def start(self) -> CaptureServer:
        self.port = self._server.start()
        if self._identity is not None:
            self._published = self._identity.publish(os.environ, self.port)
        return self

    def stop(self) -> None:
        self._server.stop()
        if self._identity is not None and self._published is not None:
            self._identity.withdraw(self._published)

    def __enter__(self) -> CaptureServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def wait_for(self, count: int, timeout_s: float = 5.0) -> list[Seen]:
        """The first `count` requests, waiting up to `timeout_s` for them to arrive."""
        with self._changed:
            if not self._changed.wait_for(lambda: len(self.requests) >= count, timeout_s):
                raise AssertionError(f"expected {count} requests, got {len(self.requests)}")
            return list(self.requests[:count])
