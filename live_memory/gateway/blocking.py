"""Blocking calls from the HTTP edge (SQLite, the file system) run off the event loop.

One small, bounded thread pool per service: a slow or locked database (SQLite waits up to
SQLITE_BUSY_TIMEOUT_S for a writer) holds a pool thread, never the uvicorn loop that every
workspace's requests share, and never more than BLOCKING_CALL_THREADS threads however many
requests wait on it.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from live_memory.config import constants as C

__all__ = ["BlockingCalls"]

T = TypeVar("T")


class BlockingCalls:
    """`await calls.run(fn, *args, **kwargs)`: `fn` runs on the pool, its result returned."""

    def __init__(self, threads: int = C.BLOCKING_CALL_THREADS) -> None:
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="edge-blocking")

    async def run(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, functools.partial(fn, *args, **kwargs))

    def close(self) -> None:
        """Finish the calls under way and stop the threads (idempotent)."""
        self._pool.shutdown(wait=True, cancel_futures=True)
