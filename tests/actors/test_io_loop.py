"""The I/O loop: uvloop's loop in its own thread, where coroutines from other threads run and
are cancelled through their futures, and which cancels what is left when it stops."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from concurrent.futures import CancelledError

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
