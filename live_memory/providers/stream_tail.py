"""Finishing a streamed reply once its message is complete, off the answer's path.

After `message_stop` a stream still has its end to deliver (a blank line, the body's last
chunk). It must be read, or closing the response closes its connection and every call pays a
new TCP connection (and TLS handshake) to the API. Reading it and handing the connection back
to the pool cost 0.2-0.4 ms of the event loop per call (httpx2's and httpcore2's end-of-body
bookkeeping), and a server that holds the stream open after `message_stop` cost the full
STREAM_TAIL_WAIT_S: both before the answer could go on. `StreamTails.defer` does that work in
a task of its own, STREAM_TAIL_DEFER_S later: by then the answer's commit (on the workspace's
thread) and its reply are done, and holding the GIL for the tail earlier would only have
delayed them. The next call does not wait for the delay: `settled` starts every deferred tail
at once and waits for it, so a connection is always back in the pool before it is needed.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import httpx2

from live_memory.config import constants

__all__ = ["StreamTails"]


class StreamTails:
    """The streams one client still finishes; on the event loop that runs its calls."""

    def __init__(self) -> None:
        self._running: dict[asyncio.Task[None], asyncio.Event] = {}

    def defer(self, response: httpx2.Response, lines: AsyncIterator[bytes]) -> None:
        """Read what follows `message_stop` on `lines`, then close `response`, a little later."""
        start = asyncio.Event()
        task = asyncio.get_running_loop().create_task(_finish(response, lines, start))
        self._running[task] = start
        task.add_done_callback(self._forget)

    async def settled(self) -> None:
        """Finish every deferred stream now and wait for it (before a call, and at close)."""
        if self._running:
            for start in self._running.values():
                start.set()
            await asyncio.wait(list(self._running))

    def _forget(self, task: asyncio.Task[None]) -> None:
        self._running.pop(task, None)


async def _finish(
    response: httpx2.Response, lines: AsyncIterator[bytes], start: asyncio.Event
) -> None:
    try:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(constants.STREAM_TAIL_DEFER_S):
                await start.wait()
        await _read_tail(lines)
    finally:
        with contextlib.suppress(httpx2.TransportError):
            await response.aclose()


async def _read_tail(lines: AsyncIterator[bytes]) -> None:
    """Read the stream to its end so the connection goes back to the pool. A server that
    keeps sending or holds the stream open past a short wait gets its connection closed
    instead; the message is complete either way."""
    seen = 0
    try:
        async with asyncio.timeout(constants.STREAM_TAIL_WAIT_S):
            async for line in lines:
                seen += len(line)
                if seen > constants.STREAM_TAIL_MAX_BYTES:
                    return
    except (TimeoutError, ValueError, httpx2.TransportError):
        return
