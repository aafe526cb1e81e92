"""WatchdogActor: one OS file watcher for the process, feeding workspace actors.

Watchdog's dispatch thread only turns each event into a private message for this actor;
debouncing, filtering and HEAD-move detection (`live_memory.watchers`) run here, and the
settled changes leave as `Route(root, Notify(...))` to the gateway, like a FileChanged hook.
When inotify runs out of watches or instances, roots are watched by polling instead.
"""

from __future__ import annotations

import errno
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, cast, get_args

from watchdog.events import (
    DirDeletedEvent,
    DirMovedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver, ObservedWatch
from watchdog.observers.polling import PollingObserver

from live_memory.actors.message import (
    FileEvent,
    GetWatcherStatus,
    Notify,
    Route,
    UnwatchRoot,
    WatchRoot,
)
from live_memory.actors.runtime import Actor, ActorDeadError, ActorRef, ActorSystem
from live_memory.config import Settings
from live_memory.config import constants as C
from live_memory.watchers import RawKind, WatchedRoot

__all__ = ["WatchdogActor"]

logger = logging.getLogger(__name__)

_EVENT_TYPES: list[type[FileSystemEvent]] = [
    FileCreatedEvent,
    FileModifiedEvent,
    FileDeletedEvent,
    FileMovedEvent,
    DirDeletedEvent,
    DirMovedEvent,
]
_RAW_KINDS = frozenset(get_args(RawKind))
_LIMIT_ERRNOS = frozenset({errno.ENOSPC, errno.EMFILE, errno.ENFILE})


@dataclass(frozen=True, slots=True)
class _FsEvent:
    """One raw watchdog event, as the dispatch thread hands it over."""

    root: str
    kind: RawKind
    path: str
    dest: str | None
    directory: bool


@dataclass(frozen=True, slots=True)
class _Flush:
    """Timer: release the bursts that are over."""


@dataclass(slots=True)
class _Root:
    state: WatchedRoot
    observer: BaseObserver
    watch: ObservedWatch


class _Forwarder(FileSystemEventHandler):
    """Runs in watchdog's dispatch thread: tell the actor, nothing else."""

    def __init__(self, root: str, tell: Callable[[Any], None]) -> None:
        super().__init__()
        self._root = root
        self._tell = tell

    def dispatch(self, event: FileSystemEvent) -> None:
        if event.event_type not in _RAW_KINDS:
            return  # opened / closed: no change of content or existence
        kind = cast("RawKind", event.event_type)
        dest = os.fsdecode(event.dest_path) if kind == "moved" else None
        message = _FsEvent(self._root, kind, os.fsdecode(event.src_path), dest, event.is_directory)
        try:
            self._tell(message)
        except ActorDeadError:
            logger.debug("watchdog actor gone; dropping %s", event.event_type)


class WatchdogActor(Actor):
    """Watches the roots of active workspaces and routes their debounced changes.

    Started as `system.start(WatchdogActor, gateway=ref, settings=settings)`. Handles
    `WatchRoot` (idempotent), `UnwatchRoot` and `GetWatcherStatus`; sends the gateway
    `Route(root, Notify(events), activate_unknown=False)` with `FileEvent(abs_path,
    "add"|"change"|"unlink", origin="watcher")`. `force_polling` skips inotify;
    `observer_factory` supplies the native observer (tests use it to exhaust inotify).
    """

    kind = "watchdog"
    dedicated_thread = True

    def __init__(
        self,
        system: ActorSystem,
        *,
        gateway: ActorRef[Any],
        settings: Settings,
        force_polling: bool = False,
        observer_factory: Callable[[], BaseObserver] = Observer,
        poll_interval_s: float = C.WATCH_POLL_INTERVAL_S,
        debounce_s: float = C.WATCH_DEBOUNCE_S,
        max_delay_s: float = C.WATCH_MAX_DELAY_S,
    ) -> None:
        super().__init__(system, "watchdog")
        self.gateway = gateway
        self.settings = settings
        self.force_polling = force_polling
        self._observer_factory = observer_factory
        self._poll_interval_s = poll_interval_s
        self._debounce_s = debounce_s
        self._max_delay_s = max_delay_s
        self._roots: dict[str, _Root] = {}
        self._native: BaseObserver | None = None
        self._polling: BaseObserver | None = None
        self.degraded_reason: str | None = None
        self._timer: threading.Timer | None = None

    def handle(self, message: Any) -> None:
        match message:
            case _FsEvent():
                self._record(message)
            case _Flush():
                self._timer = None
                self._flush()
            case WatchRoot():
                self._watch(message.root)
            case UnwatchRoot():
                self._unwatch(message.root)
            case GetWatcherStatus():
                message.reply.set_result(self.status())
            case _:
                super().handle(message)

    def status(self) -> dict[str, object]:
        mode: Literal["inotify", "polling", "off"]
        if self.settings.watcher == "off":
            mode = "off"
        elif self.force_polling or self.degraded_reason is not None:
            mode = "polling"
        else:
            mode = "inotify"
        return {"mode": mode, "roots": len(self._roots), "degraded_reason": self.degraded_reason}

    # --- watches ------------------------------------------------------------------------
    def _watch(self, root: str) -> None:
        if self.settings.watcher == "off" or root in self._roots:
            return
        if not os.path.isdir(root):
            logger.warning("not watching %s: not a directory", root)
            return
        state = WatchedRoot(
            root,
            file_globs=self.settings.file_globs,
            quiet_s=self._debounce_s,
            max_delay_s=self._max_delay_s,
        )
        placed = self._place(_Forwarder(root, self.actor_ref.tell), root, state.root)
        if placed is not None:
            observer, watch = placed
            self._roots[root] = _Root(state, observer, watch)
            kind = "polling" if observer is self._polling else "native"
            logger.info("watching %s (%s)", root, kind)

    def _place(
        self, handler: _Forwarder, root: str, path: str
    ) -> tuple[BaseObserver, ObservedWatch] | None:
        """Schedule on the native observer, or by polling once inotify has run out."""
        native = None if self.force_polling or self.degraded_reason else self._native_observer()
        if native is not None:
            try:
                return native, native.schedule(
                    handler, path, recursive=True, event_filter=_EVENT_TYPES
                )
            except OSError as exc:
                if exc.errno not in _LIMIT_ERRNOS:
                    logger.warning("cannot watch %s: %s", root, exc)
                    return None
                self._degrade(f"inotify limit reached while watching {root}: {exc}")
        polling = self._polling_observer()
        try:
            return polling, polling.schedule(
                handler, path, recursive=True, event_filter=_EVENT_TYPES
            )
        except OSError as exc:
            logger.warning("cannot watch %s, not even by polling: %s", root, exc)
            return None

    def _unwatch(self, root: str) -> None:
        entry = self._roots.pop(root, None)
        if entry is None:
            return
        try:
            entry.observer.unschedule(entry.watch)
        except KeyError:
            logger.debug("watch on %s was already gone", root)
        logger.info("stopped watching %s", root)

    def _native_observer(self) -> BaseObserver | None:
        if self._native is None:
            try:
                observer = self._observer_factory()
                observer.start()
            except OSError as exc:  # EMFILE: no inotify instance left for this user
                self._degrade(f"inotify unavailable: {exc}")
                return None
            self._native = observer
        return self._native

    def _polling_observer(self) -> BaseObserver:
        if self._polling is None:
            self._polling = PollingObserver(timeout=self._poll_interval_s)
            self._polling.start()
        return self._polling

    def _degrade(self, reason: str) -> None:
        logger.warning("%s; this and later roots are watched by polling", reason)
        self.degraded_reason = reason

    # --- events -------------------------------------------------------------------------
    def _record(self, event: _FsEvent) -> None:
        entry = self._roots.get(event.root)
        if entry is None:
            return  # unwatched while the event was queued
        entry.state.record(
            event.kind, event.path, time.monotonic(), dest=event.dest, directory=event.directory
        )
        if self._timer is None and entry.state.pending:
            self._arm(self._debounce_s)

    def _flush(self) -> None:
        now = time.monotonic()
        try:
            for root, entry in self._roots.items():
                self._route(root, entry.state, now)
        finally:
            # Re-arm even after a failure, or the remaining bursts would wait for a new event.
            due = [d for d in (e.state.next_due() for e in self._roots.values()) if d is not None]
            if due:
                self._arm(max(min(due) - now, 0.0))

    def _route(self, root: str, state: WatchedRoot, now: float) -> None:
        changes = state.flush(now)
        if not changes:
            return
        prefix = state.root.rstrip("/") + "/"
        events = tuple(FileEvent(prefix + change.path, change.kind) for change in changes)
        logger.debug("%s: routing %d watcher events", root, len(events))
        try:
            self.gateway.tell(Route(root, Notify(events), activate_unknown=False))
        except ActorDeadError:
            logger.warning("gateway gone; %d watcher events for %s dropped", len(events), root)

    def _arm(self, delay_s: float) -> None:
        ref = self.actor_ref

        def fire() -> None:
            try:
                ref.tell(_Flush())
            except ActorDeadError:
                logger.debug("watchdog actor gone; flush dropped")

        self._timer = threading.Timer(delay_s, fire)
        self._timer.daemon = True
        self._timer.start()

    def stopped(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        for observer in (self._native, self._polling):
            if observer is not None:
                observer.stop()
        for observer in (self._native, self._polling):
            if observer is not None:
                observer.join(C.WATCH_STOP_TIMEOUT_S)
        self._roots.clear()
