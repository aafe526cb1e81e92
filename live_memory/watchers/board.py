"""The watcher's published status: what `/health` shows, readable without asking the actor."""

from __future__ import annotations

import threading

__all__ = ["WatcherBoard"]


class WatcherBoard:
    """The watcher's latest status, readable from any thread without a message."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._status: dict[str, object] = {"mode": "off", "roots": 0, "degraded_reason": None}

    def publish(self, status: dict[str, object]) -> None:
        with self._lock:
            self._status = dict(status)

    def read(self) -> dict[str, object]:
        with self._lock:
            return dict(self._status)
