"""The OS file watcher on `watchdog`: inotify (Linux), FSEvents (macOS), the Windows API, each
through its observer's public API. Where none exists (watchdog would poll, or open every file
with kqueue) there is none: the actor re-checks each root's window files instead.

The observer's thread files events in a bounded inbox and wakes the actor only when it stops
being empty: one message per drained batch. watchdog's own queues are unbounded; past
`WATCH_INBOX_MAX` events are dropped and reported lost, handled as a kernel overflow.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable
from contextlib import suppress

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    EventsLostEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver, ObservedWatch

from live_memory.config import constants as C

__all__ = ["Key", "OsWatch", "native_observer"]

logger = logging.getLogger(__name__)

Key = tuple[str, bool]
"""One scheduled watch: (absolute directory, recursive)."""

WATCH_INBOX_MAX = 65_536  # events waiting for the actor; beyond it they count as lost
# watchdog os.walks a new directory of a recursive watch on its reader thread; before Python 3.12
# that recurses per level, and a path deeper than the limit (~2,000 fit) would kill the reader.
_WALK_RECURSION_LIMIT = 10_000
_EVENTS: list[type[FileSystemEvent]] = [
    FileCreatedEvent,
    FileModifiedEvent,
    FileDeletedEvent,
    FileMovedEvent,
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    EventsLostEvent,
]
# The observers watchdog picks for the platform that use its own API; its polling and kqueue
# ones stat or open every file of a tree, where re-checking a window's files costs far less.
_NATIVE = {
    "InotifyObserver": "inotify",
    "FSEventsObserver": "fsevents",
    "WindowsApiObserver": "windows",
}


def native_observer() -> tuple[BaseObserver, str] | None:
    """The platform's OS observer and its name for /health, or None where it has none."""
    observer = Observer()  # allocates nothing before its first watch
    name = type(observer).__name__
    if name not in _NATIVE:
        logger.warning("no OS file watcher here (watchdog offers %s)", name)
        return None
    return observer, _NATIVE[name]


class _Handler(FileSystemEventHandler):
    """Files one scheduled watch's events in the inbox (on watchdog's dispatch thread)."""

    def __init__(self, owner: OsWatch, key: Key) -> None:
        self.owner = owner
        self.key = key

    def on_any_event(self, event: FileSystemEvent) -> None:
        self.owner.put(self, event)


class OsWatch:
    """One observer for the process, its scheduled watches and their events' inbox."""

    def __init__(self, observer: BaseObserver, mode: str, wake: Callable[[], None]) -> None:
        if sys.version_info < (3, 12):
            sys.setrecursionlimit(max(sys.getrecursionlimit(), _WALK_RECURSION_LIMIT))
        self.mode = mode
        self._wake = wake
        self._observer = observer
        self._observer.start()
        self._watches: dict[Key, tuple[ObservedWatch, _Handler]] = {}
        self._lock = threading.Lock()
        self._inbox: list[tuple[_Handler, FileSystemEvent]] = []
        self._lost = False
        self._woken = False

    def __len__(self) -> int:
        return len(self._watches)

    def add(self, path: str, *, recursive: bool) -> Key:
        """Watch the directory `path` (and below it with `recursive`). Raises OSError (the
        kernel's limits, a directory gone meanwhile)."""
        key = (path, recursive)
        if key not in self._watches:
            handler = _Handler(self, key)
            watch = self._observer.schedule(
                handler, path, recursive=recursive, event_filter=_EVENTS
            )
            self._watches[key] = (watch, handler)
        return key

    def remove(self, key: Key) -> None:
        scheduled = self._watches.pop(key, None)
        if scheduled is not None:
            with suppress(KeyError):  # already unscheduled by a stopping observer
                self._observer.unschedule(scheduled[0])

    def put(self, handler: _Handler, event: FileSystemEvent) -> None:
        with self._lock:
            if isinstance(event, EventsLostEvent) or len(self._inbox) >= WATCH_INBOX_MAX:
                self._lost = True
            else:
                self._inbox.append((handler, event))
            wake, self._woken = not self._woken, True
        if wake:
            self._wake()

    def drain(self) -> tuple[list[tuple[Key, FileSystemEvent]], bool]:
        """The events waiting (of watches still scheduled) and whether some were lost."""
        with self._lock:
            inbox, self._inbox = self._inbox, []
            lost, self._lost = self._lost, False
            self._woken = False
        # A directory deleted and re-created under the same path has a new watch: events of
        # the old one (its deletion) must not touch the new one's bookkeeping. Those of a
        # watch merely removed since (split, released) still tell what happened.
        current = self._watches
        return [(h.key, e) for h, e in inbox if current.get(h.key, (None, h))[1] is h], lost

    def close(self) -> None:
        self._observer.stop()
        self._observer.join(C.WATCH_STOP_TIMEOUT_S)
        self._watches.clear()
