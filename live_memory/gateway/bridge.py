"""Waiting on actor replies from the event loop without ever blocking it."""

from __future__ import annotations

import asyncio
from concurrent.futures import Future
from typing import TypeVar

__all__ = ["wait_reply"]

T = TypeVar("T")


async def wait_reply(reply: Future[T], timeout: float) -> T:
    """Await a reply slot filled by an actor thread.

    `asyncio.wrap_future` uses a done-callback (no thread, no blocking get). If the caller is
    cancelled or the timeout passes, the slot is cancelled so the actor side can stop work.
    Raises TimeoutError on timeout and whatever the actor set as the exception.
    """
    wrapped = asyncio.wrap_future(reply)
    try:
        async with asyncio.timeout(timeout):  # cheaper than wait_for: no extra task
            return await wrapped
    finally:
        if not reply.done():
            reply.cancel()
