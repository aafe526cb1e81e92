"""Serving an ASGI app with uvicorn on 127.0.0.1 and an ephemeral port, in a thread."""

from __future__ import annotations

import logging
import socket
import threading
from types import TracebackType
from typing import Self

import uvicorn
from starlette.types import ASGIApp

from live_memory.config import constants as C

__all__ = ["BackgroundServer", "ServedFake"]

logger = logging.getLogger(__name__)

_START_TIMEOUT_S = 10.0
_STOP_TIMEOUT_S = 10.0


class BackgroundServer:
    """One uvicorn server in a daemon thread; `start()` returns once it accepts requests.

    `port=0` (the default) takes an ephemeral port; a chosen one is reused even right after
    another server released it (a test bringing "the same server" back). With `lifespan=True`
    the app's lifespan runs (start-up before the first request, a graceful shutdown on stop)
    and uvicorn is configured as `live-memory serve` configures it."""

    def __init__(self, app: ASGIApp, port: int = 0, *, lifespan: bool = False) -> None:
        self._app = app
        self._wanted_port = port
        self._lifespan = lifespan
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self.port: int | None = None

    def start(self) -> int:
        """Start serving; returns the port. Raises RuntimeError if uvicorn fails to start."""
        if self._server is not None:
            raise RuntimeError("the server is already running")
        # proto=IPPROTO_TCP: asyncio only sets TCP_NODELAY on accepted sockets whose proto is
        # TCP; with proto 0 every response body waits ~40 ms for a delayed ACK (Nagle).
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", self._wanted_port))
        sock.listen(128)
        port: int = sock.getsockname()[1]
        if self._lifespan:  # the app as `serve` runs it
            config = uvicorn.Config(
                self._app,
                log_config=None,
                access_log=False,
                lifespan="on",
                timeout_graceful_shutdown=int(C.SHUTDOWN_GRACE_S),
                timeout_keep_alive=int(C.KEEP_ALIVE_TIMEOUT_S),
                limit_concurrency=C.MAX_CONNECTIONS,
                server_header=False,
            )
        else:
            config = uvicorn.Config(
                self._app,
                log_config=None,
                access_log=False,
                lifespan="off",
                ws="none",
                http="h11",
                loop="asyncio",
                timeout_graceful_shutdown=1,
            )
        server = _Server(config)
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_in_thread, args=(sock,), name=f"fake-server-{port}", daemon=True
        )
        self._thread.start()
        if not server.ready.wait(_START_TIMEOUT_S) or not server.started:
            self.stop()
            raise RuntimeError("the background server did not start")
        self.port = port
        return port

    def stop(self) -> None:
        """Stop serving and join the thread (idempotent)."""
        server, thread = self._server, self._thread
        self._server = self._thread = None
        self.port = None
        if server is not None:
            server.should_exit = True
            # A fake does not wait for delayed replies nobody awaits; an app with a lifespan
            # shuts down gracefully (its actors drain and flush, as under SIGTERM).
            server.force_exit = not self._lifespan
        if thread is not None:
            thread.join(_STOP_TIMEOUT_S + (C.SHUTDOWN_GRACE_S if self._lifespan else 0.0))
            if thread.is_alive():
                logger.warning("the background server's thread did not stop in time")


class _Server(uvicorn.Server):
    """uvicorn that reports when it is ready, and never installs signal handlers."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = threading.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        self.ready.set()

    def serve_in_thread(self, sock: socket.socket) -> None:
        try:
            self.run(sockets=[sock])
        finally:
            self.ready.set()
            sock.close()


class ServedFake:
    """Lifecycle shared by the shipped fakes: `start()` / `stop()` or a `with` block around
    one BackgroundServer, and the loopback base URL while it runs."""

    def __init__(self, app: ASGIApp, label: str) -> None:
        self._server = BackgroundServer(app)
        self._port: int | None = None
        self._label = label

    def start(self) -> Self:
        """Serve on 127.0.0.1 and an ephemeral port; returns once it accepts requests."""
        self._port = self._server.start()
        return self

    def stop(self) -> None:
        """Stop serving and join the server thread (idempotent)."""
        self._server.stop()
        self._port = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def _base_url(self) -> str:
        if self._port is None:
            raise RuntimeError(f"the {self._label} is not started")
        return f"http://127.0.0.1:{self._port}"
