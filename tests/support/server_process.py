"""Start a real `live-memory serve` subprocess on a free loopback port (tests and benches).

The port is bound here and the socket handed to the child (`serve --fd`): no other process can
take the port between choosing it and listening on it."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx

from tests.support import loopback

__all__ = ["ServerProcess", "free_port"]

# A wait for /health, over as soon as it answers. Loaded machines: in two suites run at once
# (load ~17), a Ray gateway (imports, then joining the cluster) took over 120 s.
START_TIMEOUT_S = 300.0
_HEALTH_WAIT = httpx.Timeout(5.0, connect=0.5)
"""One /health attempt: up to 5 s for the answer (a starting server answers once its app is
up); between attempts the process is checked, so one that exited is seen within that."""


def free_port() -> int:
    """A port nothing listens on right now (for "nothing is there" checks, not for serving)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ServerProcess:
    """`with ServerProcess(data_dir, env) as server:` → server.url, server.client."""

    def __init__(self, data_dir: Path, env: Mapping[str, str], port: int | None = None) -> None:
        self.data_dir = data_dir
        self._sock: socket.socket | None = None
        if port is None:
            # proto=IPPROTO_TCP: asyncio sets TCP_NODELAY only on sockets whose proto is TCP.
            self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
            self._sock.bind(("127.0.0.1", 0))
            self._sock.listen()  # connections wait in the backlog until the server accepts
            port = int(self._sock.getsockname()[1])
        self.port = port
        self.env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("LIVE_MEMORY_", "ANTHROPIC_", "OPENAI_", "CLAUDE_"))
        }
        self.env.update({"LIVE_MEMORY_DATA_DIR": str(data_dir), "HOME": str(data_dir / "home")})
        self.env.update(env)
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = data_dir / f"server-{self.port}.log"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> ServerProcess:
        (self.data_dir / "home").mkdir(parents=True, exist_ok=True)
        # The first start serves on the socket bound in __init__; a restart binds the same port
        # again (the test wants "the same server" back where its clients point).
        sock, self._sock = self._sock, None
        where = ["--fd", str(sock.fileno())] if sock else ["--port", str(self.port)]
        try:
            with self.log.open("ab") as log:
                self.proc = subprocess.Popen(
                    [sys.executable, "-m", "live_memory.cli", "serve", *where],
                    env=self.env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    pass_fds=(sock.fileno(),) if sock else (),
                )
        finally:
            if sock is not None:
                sock.close()  # the child holds its own copy
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited early:\n{self.log.read_text()}")
            try:
                # On the socket handed over (listening already), the request waits in its
                # backlog and is answered once the app is up: no polling while it starts.
                if loopback.get(f"{self.url}/health", timeout=_HEALTH_WAIT).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.05)  # a restart on --port (nothing listens yet), or it is exiting
        raise RuntimeError(f"server did not start:\n{self.log.read_text()}")

    def stop(self, sig: int = signal.SIGTERM) -> int:
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        return int(self.proc.returncode)

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        kwargs.setdefault("timeout", 60)
        return loopback.request(method, f"{self.url}{path}", **kwargs)

    def __enter__(self) -> ServerProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
