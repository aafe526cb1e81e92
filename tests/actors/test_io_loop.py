"""The I/O loop: uvloop's loop in its own thread, where coroutines from other threads run and
are cancelled through their futures, and which cancels what is left when it stops, and stops
even with a connection left open."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from concurrent.futures import CancelledError
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx2
import pytest
import uvloop

from live_memory.actors import IoLoop


@pytest.fixture
def io() -> Iterator[IoLoop]:
    loop = IoLoop()
    yield loop
    loop.stop()


def test_the_loop_is_uvloops_and_runs_on_its_own_thread(io: IoLoop) -> None:
    async def where() -> tuple[str, bool]:
        return threading.current_thread().name, isinstance(asyncio.get_running_loop(), uvloop.Loop)

    assert io.submit(where()).result(timeout=10) == ("io-loop", True)


def test_cancelling_the_future_cancels_the_coroutine(io: IoLoop) -> None:
    started, cancelled = threading.Event(), threading.Event()

    async def forever() -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    future = io.submit(forever())
    assert started.wait(10)
    future.cancel()
    assert cancelled.wait(10)
    with pytest.raises(CancelledError):
        future.result(timeout=10)


def test_stop_cancels_what_is_still_running() -> None:
    io = IoLoop()
    started = threading.Event()

    async def forever() -> None:
        started.set()
        await asyncio.Event().wait()

    future = io.submit(forever())
    assert started.wait(10)
    io.stop()
    assert io.loop.is_closed()
    with pytest.raises(CancelledError):
        future.result(timeout=10)


class _Ok(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: the client pools the connection

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("content-length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.filterwarnings(
    "ignore::ResourceWarning", "ignore::pytest.PytestUnraisableExceptionWarning"
)
def test_stop_returns_with_an_http_connection_left_open() -> None:
    # An HTTP client nobody closed keeps its idle pooled connection; uvloop may then refuse
    # to close the loop (EBUSY). Stopping still returns, and a second stop does nothing.
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Ok)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    io = IoLoop()
    clients: list[httpx2.AsyncClient] = []

    async def get() -> int:
        clients.append(httpx2.AsyncClient())
        response = await clients[0].get(f"http://127.0.0.1:{server.server_address[1]}/")
        return response.status_code

    try:
        assert io.submit(get()).result(timeout=10) == 200
        io.stop()
        assert not io.loop.is_running()
        io.stop()
    finally:
        server.shutdown()
        server.server_close()
