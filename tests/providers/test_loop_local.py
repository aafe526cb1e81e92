from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import pytest

from live_memory.providers.loop_local import LoopLocal


class Client:
    def __init__(self) -> None:
        self.closed_on: threading.Thread | None = None

    async def close(self) -> None:
        self.closed_on = threading.current_thread()


@pytest.fixture
def other_loop() -> Iterator[tuple[asyncio.AbstractEventLoop, threading.Thread]]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="other-loop")
    thread.start()
    yield loop, thread
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)
    loop.close()


async def get(clients: LoopLocal[Client]) -> Client:
    return clients.get()


def test_each_loop_gets_its_own_instance_and_keeps_it() -> None:
    clients = LoopLocal(Client)

    async def twice() -> tuple[Client, Client]:
        return clients.get(), clients.get()

    first, again = asyncio.run(twice())
    other, _ = asyncio.run(twice())

    assert first is again
    assert other is not first


def test_aclose_closes_clients_of_running_loops_on_their_own_thread(
    other_loop: tuple[asyncio.AbstractEventLoop, threading.Thread],
) -> None:
    loop, thread = other_loop
    clients = LoopLocal(Client)
    remote = asyncio.run_coroutine_threadsafe(get(clients), loop).result(5)

    async def close_here() -> Client:
        local = clients.get()
        await clients.aclose(lambda client: client.close())
        return local

    local = asyncio.run(close_here())

    assert remote.closed_on is thread
    assert local.closed_on is threading.main_thread()


def test_aclose_drops_clients_of_stopped_loops() -> None:
    clients = LoopLocal(Client)
    stale = asyncio.run(get(clients))  # that loop is closed when run() returns

    asyncio.run(clients.aclose(lambda client: client.close()))

    assert stale.closed_on is None
