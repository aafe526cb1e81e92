"""MCP progress notifications for `ask_live_memory`: what the question is doing, as it does it.

The question's loop writes a `QuestionProgress` board (model call n, a tool running and its
name, tokens streamed so far); this side wakes when it changes and sends a progress report when
`ProgressPacer` says one is due. Each report also resets the client's read timer on a long
answer (a CPU model may take minutes), which is why a heartbeat goes out even when nothing
changed. `progress` is the elapsed seconds (it only grows), `message` says what is happening.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable

from live_memory.agent import ProgressPacer, QuestionProgress

__all__ = ["Report", "report_progress"]

Report = Callable[[float, str], Awaitable[None]]
"""Sends one progress notification: (elapsed seconds, message)."""


async def report_progress(progress: QuestionProgress, report: Report) -> None:
    """Report `progress` until cancelled (the caller cancels it when the answer is in)."""
    loop = asyncio.get_running_loop()
    changed = asyncio.Event()

    def wake() -> None:  # from the question loop's thread
        with contextlib.suppress(RuntimeError):  # this loop closed: nobody to tell
            loop.call_soon_threadsafe(changed.set)

    progress.watch(wake)
    pacer = ProgressPacer()
    started = time.monotonic()
    while True:
        snapshot = progress.snapshot()
        now = time.monotonic()
        delay = pacer.due_in(snapshot, now)
        if delay <= 0:
            await report(now - started, progress.describe())
            pacer.sent(snapshot, now)
            continue
        if pacer.pending(snapshot):  # due in `delay` whatever else changes meanwhile
            await asyncio.sleep(delay)
            continue
        changed.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(changed.wait(), delay)
