"""One inotify instance and the thread that reads it (Linux; `inotify_simple` wraps the calls).

Watches are placed one directory at a time by the watchdog actor, which decides which
directories deserve one (not ignored ones, within budget); this module only adds, removes
and reads. The reader thread batches what one read returns and hands it over whole.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from live_memory.config import constants as C

__all__ = ["InotifySource", "RawEvent", "flags"]

logger = logging.getLogger(__name__)

try:  # inotify is Linux-only; elsewhere every root is polled
    from inotify_simple import INotify, flags
except (ImportError, OSError):  # pragma: no cover - non-Linux platforms
    INotify = None
    flags = None

RawEvent = tuple[int, int, str]
"""(watch descriptor, event mask, entry name) as the kernel reports it."""

_READ_TIMEOUT_MS = 500  # how often the reader notices it should stop


def _mask() -> int:
    f = flags
    return int(
        f.CREATE
        | f.DELETE
        | f.MODIFY
        | f.MOVED_FROM
        | f.MOVED_TO
        | f.ONLYDIR
        | f.DONT_FOLLOW
        | f.EXCL_UNLINK
    )


class InotifySource:
    """Raises OSError from the constructor when no inotify instance is available (EMFILE)."""

    def __init__(self, deliver: Callable[[list[RawEvent]], None]) -> None:
        if INotify is None:
            raise OSError("inotify is not available on this platform")
        self._inotify = INotify()
        self._mask = _mask()
        self._deliver = deliver
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="inotify-reader", daemon=True)
        self._thread.start()

    def add(self, path: str) -> int:
        """Watch the directory `path`; its watch descriptor. Raises OSError (ENOSPC...)."""
        return int(self._inotify.add_watch(path, self._mask))

    def remove(self, wd: int) -> None:
        try:
            self._inotify.rm_watch(wd)
        except OSError:  # already gone with its directory
            logger.debug("watch %d was already removed", wd)

    def _run(self) -> None:
        delay_ms = int(C.WATCH_READ_DELAY_S * 1000)
        while not self._stop.is_set():
            try:
                events = self._inotify.read(timeout=_READ_TIMEOUT_MS, read_delay=delay_ms)
            except (OSError, ValueError):  # closed under us at shutdown
                if not self._stop.is_set():
                    logger.exception("inotify read failed; the watcher stops receiving events")
                return
            if events:
                self._deliver([(e.wd, e.mask, e.name) for e in events])

    def close(self) -> None:
        self._stop.set()
        self._thread.join(C.WATCH_STOP_TIMEOUT_S)
        try:
            self._inotify.close()
        except OSError:
            logger.debug("closing inotify failed")
