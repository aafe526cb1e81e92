"""WatchdogActor: one OS file watcher for the process, feeding workspace actors.

It keeps one `watchdog` observer (`live_memory.watchers.OsWatch`: inotify, FSEvents or the
Windows API) and decides what it watches: with inotify, one recursive watch per subtree free of
ignored directories and a watch of its own entries for a directory above one, so `.git` and
ignored trees are never watched, within a per-root and a total budget. Debouncing, ignore
rules, storms and HEAD moves (`live_memory.watchers`) run here; settled changes leave as
`Route(root, Notify(...))` to the gateway, like a FileChanged hook, and storms as one
`Route(root, Revalidate())`, as is the moment a root's watches are in place (what changed
before was seen by no one). A root that does not fit its budget releases what it placed and is
"polled": every WATCH_FALLBACK_POLL_S its workspace re-checks the files its window holds, which
costs what the window holds, not what the repository does.

The actor publishes its status on a `WatcherBoard` after every change, so `/health` reads it
without waiting on the actor (which may be walking a large tree or flushing a storm).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from live_memory.actors.message import (
    FileEvent,
    GetWatcherStatus,
    Notify,
    Revalidate,
    Route,
    UnwatchRoot,
    WatchRoot,
)
from live_memory.actors.runtime import Actor, ActorDeadError, ActorRef, ActorSystem
from live_memory.actors.watch_roots import WatchedEntry, rescans_for, watcher_status
from live_memory.config import Settings
from live_memory.config import constants as C
from live_memory.watchers import (
    Flushed,
    OsWatch,
    WatchedRoot,
    WatcherBoard,
    WatchTable,
    effective_total_budget,
    native_observer,
    place_watches,
    watch_git_dirs,
)

__all__ = ["WatchdogActor", "WatcherBoard"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class _Drain:
    """Events wait in the observer's inbox (sent when it stops being empty)."""


@dataclass(frozen=True, slots=True)
class _Flush:
    """Timer: release the bursts that are over."""


@dataclass(frozen=True, slots=True)
class _Poll:
    """Ticker: polled roots re-check their window's files."""


def _teller(ref: ActorRef[Any], message: object) -> Callable[[], None]:
    """Tells `ref` `message` when called from another thread (the actor may be gone)."""

    def tell() -> None:
        try:
            ref.tell(message)
        except ActorDeadError:
            logger.debug("watchdog actor gone; %s dropped", type(message).__name__)

    return tell


class WatchdogActor(Actor):
    """Watches the roots of active workspaces and routes their debounced changes.

    Started as `system.start(WatchdogActor, gateway=ref, settings=settings, board=board)`.
    Handles `WatchRoot` (idempotent), `UnwatchRoot` and `GetWatcherStatus`. `force_polling`
    skips the OS watcher; `max_per_root` / `max_total` override the settings' budgets (tests use
    them to exhaust a small limit).
    """

    kind = "watchdog"

    def __init__(
        self,
        system: ActorSystem,
        *,
        gateway: ActorRef[Any],
        settings: Settings,
        board: WatcherBoard | None = None,
        force_polling: bool = False,
        max_per_root: int | None = None,
        max_total: int | None = None,
        debounce_s: float = C.WATCH_DEBOUNCE_S,
        max_delay_s: float = C.WATCH_MAX_DELAY_S,
        poll_interval_s: float = C.WATCH_FALLBACK_POLL_S,
        storm_paths: int = C.WATCH_STORM_PATHS,
    ) -> None:
        super().__init__(system, "watchdog")
        self.gateway = gateway
        self.settings = settings
        self.board = board or WatcherBoard()
        self.force_polling = force_polling
        total = max_total or effective_total_budget(settings.watch_max_total)
        self.table = WatchTable(min(max_per_root or settings.watch_max_per_root, total), total)
        self._debounce_s = debounce_s
        self._max_delay_s = max_delay_s
        self._poll_interval_s = poll_interval_s
        self._storm_paths = storm_paths
        self._roots: dict[str, WatchedEntry] = {}
        self._source: OsWatch | None = None
        self._polling_armed = False
        self.degraded_reason: str | None = None
        self._timer: threading.Timer | None = None

    def started(self) -> None:
        if self.settings.watcher != "off" and not self.force_polling:
            native = native_observer()
            if native is None:
                self.degraded_reason = "no OS file watcher on this platform; roots are polled"
            else:
                self._source = OsWatch(*native, _teller(self.actor_ref, _Drain()))
        self._publish()

    def handle(self, message: Any) -> None:
        match message:
            case _Drain():
                self._events()
            case _Flush():
                self._timer = None
                self._flush()
            case _Poll():
                self._poll()
            case WatchRoot():
                self._watch(message.root)
            case UnwatchRoot():
                self._unwatch(message.root)
            case GetWatcherStatus():
                message.reply.set_result(self.status())
            case _:
                super().handle(message)

    def status(self) -> dict[str, object]:
        if self.settings.watcher == "off":
            mode = "off"
        else:
            mode = "polling" if self._source is None else self._source.mode
        return watcher_status(mode, self.degraded_reason, self._roots, self.table)

    def _publish(self) -> None:
        self.board.publish(self.status())

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
            vendored=self.settings.include_vendored,
            quiet_s=self._debounce_s,
            max_delay_s=self._max_delay_s,
            storm_paths=self._storm_paths,
        )
        entry = self._roots[root] = WatchedEntry(state)
        if self._source is None:
            self._poll_root(root, entry, "has no OS watcher (polling its window's files)")
        else:
            failure = place_watches(self._source, self.table, root, state, "", report=False)
            if failure is not None:
                for key in self.table.release_root(root):
                    self._source.remove(key)  # a root that does not fit keeps nothing
                self._poll_root(root, entry, failure)
        if self._source is not None:
            watch_git_dirs(self._source, self.table, root, state, entry.meta)
        if entry.polled_because is None:
            self._route_message(root, Revalidate(files=True, watches_placed=True))
        how = entry.polled_because or f"{self.table.used_by(root)} directories watched"
        logger.info("watching %s (%s)", root, how)
        self._publish()

    def _poll_root(self, root: str, entry: WatchedEntry, why: str) -> None:
        entry.polled_because = why
        logger.warning(
            "%s %s; re-checking its window's files every %.0f s", root, why, self._poll_interval_s
        )
        if not self._polling_armed:
            self._polling_armed = True
            self.system.every(self._poll_interval_s, self.actor_ref, _Poll)

    def _unwatch(self, root: str) -> None:
        if self._roots.pop(root, None) is None:
            return
        for key in self.table.release_root(root):
            if self._source is not None:
                self._source.remove(key)
        logger.info("stopped watching %s", root)
        self._publish()

    # --- events -------------------------------------------------------------------------
    def _events(self) -> None:
        if self._source is None:
            return
        events, lost = self._source.drain()
        now = time.monotonic()
        rescans = rescans_for(
            events, lost, roots=self._roots, table=self.table, watch=self._source, now=now
        )
        for root, starts in rescans.items():
            self._rescan(root, starts)
        self._arm_if_pending()

    def _rescan(self, root: str, starts: set[str]) -> None:
        """Place watches on directories that are new (or newly not ignored) and report the
        files they hold; "" in `starts` walks the whole root (after an overflow or an edit of
        the ignore rules)."""
        entry = self._roots.get(root)
        if entry is None or entry.polled_because is not None or self._source is None:
            return
        entry.state.rescan_due = False
        before = self.table.used_by(root)
        failure = None
        for rel in sorted({""} if "" in starts else starts):
            start = rel
            if rel and entry.state.skipped(rel):
                start = rel.rpartition("/")[0]
                above = self.table.covering(root, os.path.join(root, start) if start else root)
                if above is None or not above[1]:
                    continue  # not watched, as it should be; else a recursive watch above must
            failure = place_watches(self._source, self.table, root, entry.state, start, report=True)
            if failure is not None:
                break
        if failure is not None:
            for key in self.table.release_root(root, meta_too=False):
                self._source.remove(key)
            self._poll_root(root, entry, failure)
        if self.table.used_by(root) != before:
            # A nested repository may have appeared.
            watch_git_dirs(self._source, self.table, root, entry.state, entry.meta)
            self._publish()

    # --- flushing -----------------------------------------------------------------------
    def _flush(self) -> None:
        now = time.monotonic()
        try:
            for root, entry in list(self._roots.items()):
                self._route(root, entry.state.flush(now))
        finally:
            self._arm_if_pending()
            self._publish()

    def _route(self, root: str, flushed: Flushed) -> None:
        prefix = root.rstrip("/") + "/"
        if flushed.changes:
            events = tuple(FileEvent(prefix + c.path, c.kind) for c in flushed.changes)
            self._route_message(root, Notify(events))
        if flushed.revalidate or flushed.tree_stale:
            message = Revalidate(files=flushed.revalidate, tree_stale=flushed.tree_stale)
            self._route_message(root, message)

    def _route_message(self, root: str, message: Notify | Revalidate) -> None:
        try:
            self.gateway.tell(Route(root, message, activate_unknown=False))
        except ActorDeadError:
            logger.warning("gateway gone; watcher changes for %s dropped", root)

    def _poll(self) -> None:
        for root, entry in self._roots.items():
            if entry.polled_because is not None:
                self._route(root, Flushed([], revalidate=True))

    def _arm_if_pending(self) -> None:
        if self._timer is not None:
            return
        now = time.monotonic()
        due = [d for d in (e.state.next_due() for e in self._roots.values()) if d is not None]
        if due:
            delay_s = max(min(due) - now, 0.0)
            self._timer = threading.Timer(delay_s, _teller(self.actor_ref, _Flush()))
            self._timer.daemon = True
            self._timer.start()

    def stopped(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        if self._source is not None:
            self._source.close()
        self._roots.clear()
