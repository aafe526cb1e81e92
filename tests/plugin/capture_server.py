"""A real loopback HTTP server that records every request and answers as a test tells it.

Stands in for the live-memory server where a test needs to see exactly what a hook script or
the CLI sent (the body, the headers) or needs a chosen answer (a 500, a 404). Runs uvicorn in a
thread on a chosen or ephemeral port; waits are bounded and use a condition, never sleeps.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

__all__ = ["CaptureServer", "Seen", "closed_port"]

_START_TIMEOUT_S = 10.0
_STOP_TIMEOUT_S = 10.0

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


class _Server(uvicorn.Server):
    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = threading.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        self.ready.set()


class CaptureServer:
    """`with CaptureServer() as server:` then `server.port`, `server.wait_for(n)`."""

    def __init__(self, port: int = 0, respond: Responder = _default_responder) -> None:
        self.respond = respond
        self.requests: list[Seen] = []
        self._changed = threading.Condition()
        self._wanted_port = port
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

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
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", self._wanted_port))
        sock.listen(128)
        self.port = int(sock.getsockname()[1])
        methods = ["GET", "POST"]
        app = Starlette(routes=[Route("/{path:path}", self._handle, methods=methods)])
        config = uvicorn.Config(
            app, log_config=None, access_log=False, lifespan="off", ws="none", http="h11"
        )
        self._server = _Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, daemon=True
        )
        self._thread.start()
        if not self._server.ready.wait(_START_TIMEOUT_S):
            self.stop()
            raise RuntimeError("capture server did not start")
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
            self._server.force_exit = True
        if self._thread is not None:
            self._thread.join(_STOP_TIMEOUT_S)
        self._server = self._thread = None

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
