"""A workspace index's "first pass finished" flag, waited on through its owner's condition.

A threading.Event per index is a Condition, a lock and a 64-slot deque (about 1 KB), kept
while the workspace is active; with a thousand workspaces activated at once those blocks were
left scattered through the allocator's pages after they passivated. Every index of one server
shares one condition instead (set once per pass; waiters re-check their own flag).
"""

from __future__ import annotations

import threading

__all__ = ["Completion"]


class Completion:
    """`set`, `is_set` and `wait(timeout)` as on a threading.Event."""

    __slots__ = ("_cond", "_done")

    def __init__(self, cond: threading.Condition | None = None) -> None:
        self._cond = cond if cond is not None else threading.Condition()
        self._done = False

    def set(self) -> None:
        with self._cond:
            self._done = True
            self._cond.notify_all()

    def is_set(self) -> bool:
        return self._done

    def wait(self, timeout: float | None = None) -> bool:
        """True once set; False when `timeout` passed first."""
        with self._cond:
            return self._cond.wait_for(lambda: self._done, timeout)
