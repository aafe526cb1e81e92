"""The OS file watcher on `watchdog`: inotify on Linux, FSEvents on macOS, the Windows API on
Windows, each through its observer's public API (`schedule`, `unschedule`, event handlers).

Where none exists (watchdog would fall back to polling, or to kqueue's descriptor per file)
there is no `OsWatch`: the watchdog actor then re-checks each root's window files instead.

Events are not sent to the actor one by one: the observer's dispatch thread appends them to a
bounded inbox and wakes the actor only when the inbox stops being empty, so a storm costs the
actor one message per drained batch. watchdog's own queues are unbounded (its inotify reader
empties the kernel's queue eagerly, so the kernel rarely overflows); the inbox is the bound:
beyond `WATCH_INBOX_MAX` waiting events the rest are dropped and the next drain reports them
lost, which the actor treats as the kernel's overflow (every root re-validated and re-walked).
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
# watchdog walks a new directory inside a recursive watch with os.walk on its reader thread; before
# Python 3.12 os.walk recurses once per level, and a tree deeper than the recursion limit (a path
# can hold ~2,000 levels) would kill that thread and with it every watch of the process.
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
