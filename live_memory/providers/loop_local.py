"""One SDK client per event loop.

An SDK client's connection pool belongs to the loop that first used it; sharing it with a
second loop fails in confusing ways. Forks may each run their own loop, so an adapter keeps
one client per running loop, made on first use and closed by `aclose`.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import weakref
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

from live_memory.config import constants

__all__ = ["LoopLocal"]

logger = logging.getLogger(__name__)

T = TypeVar("T")


class LoopLocal(Generic[T]):
    """Lazily made, per-event-loop instances of `T`; thread-safe."""

    def __init__(self, factory: Callable[[], T]) -> None:
        self._factory = factory
        self._lock = threading.Lock()
        self._items: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, T] = (
            weakref.WeakKeyDictionary()
        )

    def get(self) -> T:
        """The instance for the running loop (made now if this loop has none yet)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            item = self._items.get(loop)
            if item is None:
                item = self._factory()
                self._items[loop] = item
            return item

    async def aclose(self, close: Callable[[T], Awaitable[None]]) -> None:
        """Close every instance: directly on this loop, via `run_coroutine_threadsafe` on
        other live loops; instances of loops already closed are dropped."""
        current = asyncio.get_running_loop()
        with self._lock:
            items = list(self._items.items())
            self._items.clear()
        for loop, item in items:
            if loop is current:
                await close(item)
            elif loop.is_running():
                future = asyncio.run_coroutine_threadsafe(_call(close, item), loop)
                try:
                    await asyncio.wait_for(
                        asyncio.wrap_future(future), constants.PROVIDER_CLOSE_TIMEOUT_S
                    )
                except TimeoutError:
                    logger.warning("an SDK client on another event loop did not close in time")
            else:
                logger.debug("dropping an SDK client whose event loop has stopped")


async def _call(close: Callable[[T], Awaitable[None]], item: T) -> None:
    await close(item)
