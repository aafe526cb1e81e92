"""Finishing a streamed reply once its message is complete, off the answer's path.

After `message_stop` a stream still has its end to deliver (a blank line, the body's last
chunk). It must be read, or closing the response closes its connection and every call pays a
new TCP connection (and TLS handshake) to the API; and a server that holds the stream open after
`message_stop` would cost the answer STREAM_TAIL_WAIT_S. `StreamTails.defer` reads it in a task
of its own, so the answer goes on at once; the next call (and `aclose`) waits for it first, so
a connection is always back in the pool before it is needed.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable

from live_memory.config import constants

__all__ = ["StreamTails"]

logger = logging.getLogger(__name__)

_TAIL_MAX_EVENTS = 64  # events after message_stop read before giving up on the connection


class StreamTails:
    """The streams one client still finishes; on the event loop that runs its calls."""

    def __init__(self) -> None:
        self._running: set[asyncio.Task[None]] = set()

    def defer(self, events: AsyncIterator[object], close: Callable[[], Awaitable[None]]) -> None:
        """Read what follows `message_stop` on `events`, then `close()` the stream."""
        task = asyncio.get_running_loop().create_task(_finish(events, close))
        self._running.add(task)
        task.add_done_callback(self._running.discard)

    async def settled(self) -> None:
        """Wait for every deferred stream to finish (before a call, and at close)."""
        if self._running:
            await asyncio.wait(list(self._running))


async def _finish(events: AsyncIterator[object], close: Callable[[], Awaitable[None]]) -> None:
    """Read the stream to its end so the connection goes back to the pool. A server that
    keeps sending or holds the stream open past a short wait gets its connection closed
    instead; the message is complete either way, so a failure here is only logged."""
    try:
        async with asyncio.timeout(constants.STREAM_TAIL_WAIT_S):
            for _ in range(_TAIL_MAX_EVENTS):
                if await anext(events, None) is None:
                    break
    except TimeoutError:
        pass
    except Exception as exc:  # the SDK's or the transport's: the answer is already out
        logger.debug("reading a finished stream's tail failed: %s", exc)
    finally:
        await close()
