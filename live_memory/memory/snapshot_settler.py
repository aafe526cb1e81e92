"""Settling snapshot saves on a thread of their own, so a workspace never waits for an fsync.

An answer waits only for its state to survive a crash of the server (`SnapshotStore.save(...,
settle=False)`); the fsync that makes it survive a power loss too came right after, on the
workspace's own thread, and a client that asks again at once found its next question queued
behind it: 3 ms at the median, 10 ms at the 90th percentile here, now off every answer's
path. One thread settles for every store and workspace, one save at a time (fsyncs share a
disk); a root waits in line at most once, since settling reads its newest unsettled copy
whenever it runs, so the line is bounded by the number of workspaces with a save not yet
settled. What is still in line when the server stops is settled by the next load.

A root is settled `delay_s` after it joined the line (SNAPSHOT_SETTLE_DELAY_S). Settling at
once woke this thread beside the reply its save had just released, on the same two cores
and the same GIL, for every answer; a client asking back to back now has its answers of the
delay settled by one fsync, after them. `wait_idle` (shutdown, tests) settles what waits at
once.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

from live_memory.config import constants as C

__all__ = ["SnapshotSettler"]

logger = logging.getLogger(__name__)


class SnapshotSettler:
    """A line of roots to settle, worked through by one daemon thread started on demand."""

    def __init__(
        self,
        settle: Callable[[Path], None],
        name: str = "snapshot-settler",
        *,
        delay_s: float = C.SNAPSHOT_SETTLE_DELAY_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._settle = settle
        self._name = name
        self._delay_s = delay_s
        self._clock = clock
        self._ready = threading.Condition()
        self._line: dict[Path, float] = {}
        """Roots waiting, oldest first (a dict: in line at most once each), and when each is
        due."""
        self._busy = False
        self._hurry = 0
        """How many callers wait for the line to empty: while any does, nothing waits for
        its due time."""
        self._thread: threading.Thread | None = None

    def submit(self, root: Path) -> None:
        """Settle `root` soon (a no-op when it already waits: that run settles this save)."""
        with self._ready:
            if root in self._line:
                return
            if not self._line:  # otherwise the worker already waits for an earlier root
                self._ready.notify_all()
            self._line[root] = self._clock() + self._delay_s
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()

    def wait_idle(self, timeout_s: float) -> bool:
        """Settle what waits now and block until nothing waits or runs (shutdown, tests);
        False on timeout."""
        with self._ready:
            self._hurry += 1
            self._ready.notify_all()
            try:
                return self._ready.wait_for(lambda: not self._line and not self._busy, timeout_s)
            finally:
                self._hurry -= 1

    def _next(self) -> Path:
        """The oldest root once it is due (or at once while someone waits for the line)."""
        with self._ready:
            while True:
                self._ready.wait_for(lambda: bool(self._line))
                root, due = next(iter(self._line.items()))
                wait_s = due - self._clock()
                if wait_s <= 0 or self._hurry:
                    del self._line[root]
                    self._busy = True
                    return root
                self._ready.wait(wait_s)

    def _run(self) -> None:
        while True:
            root = self._next()
            try:
                self._settle(root)
            except Exception as exc:  # reported by the store (/health); the copy still loads
                logger.error("snapshot of %s not settled: %s", root, exc)
            finally:
                with self._ready:
                    self._busy = False
                    self._ready.notify_all()
