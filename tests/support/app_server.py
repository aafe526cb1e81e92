"""The whole app in this process, served by uvicorn on a real loopback socket.

`AppServer` is a drop-in for `ServerProcess` where a test needs the server's HTTP surface but not
its process (no pid, no signals, no restart under `kill -9`): the same app `live-memory serve`
builds (`create_app`), the same uvicorn settings, real HTTP over 127.0.0.1, in a fraction of the
start-up time of a fresh interpreter. The port is bound before uvicorn starts and handed to it
as a socket, so nothing can take it in between.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol, Self

import httpx

from live_memory.config import load_settings
from live_memory.gateway import create_app, server_identity_of
from tests.support import loopback
from tests.support.background_server import BackgroundServer

__all__ = ["AppServer", "RunningServer"]

_PASSED_PREFIXES = ("LIVE_MEMORY_", "ANTHROPIC_", "OPENAI_", "CLAUDE_")


class AppServer:
    """`with AppServer(data_dir, env) as server:` → server.url, server.request(...)."""

    def __init__(self, data_dir: Path, env: Mapping[str, str]) -> None:
        self.data_dir = data_dir
        # The environment a fresh `serve` would see: the test's variables, none of ours.
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(_PASSED_PREFIXES)}
        self.env.update({"LIVE_MEMORY_DATA_DIR": str(data_dir), "HOME": str(data_dir / "home")})
        self.env.update(env)
        self._server: BackgroundServer | None = None
        self.port: int | None = None
        self._withdraw: Callable[[], None] = lambda: None

    @property
    def url(self) -> str:
        if self.port is None:
            raise RuntimeError("the app server is not started")
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Self:
        (self.data_dir / "home").mkdir(parents=True, exist_ok=True)
        settings = load_settings(self.env)
        app = create_app(settings, environ=self.env)
        self._server = BackgroundServer(app, lifespan=True)
        self.port = self._server.start()
        # Published as `live-memory serve` publishes it, so the CLI and hooks trust this server.
        identity = server_identity_of(app)
        assert identity is not None
        path = identity.publish(self.env, self.port)
        assert path is not None, "the identity directory is not private"
        self._withdraw = lambda: identity.withdraw(path)
        return self

    def stop(self) -> None:
        """Shut down as under SIGTERM: actors drain, snapshots are flushed (idempotent)."""
        server, self._server = self._server, None
        if server is not None:
            server.stop()
            self._withdraw()

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        return loopback.request(method, f"{self.url}{path}", timeout=60, **kwargs)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class RunningServer(Protocol):
    """What helpers need from a started server, in process (`AppServer`) or not
    (`ServerProcess`)."""

    @property
    def url(self) -> str: ...

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response: ...
