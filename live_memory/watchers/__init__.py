"""The OS file watcher: `watchdog`'s observer (`OsWatch`) and the logic around it, free of
threads: which directories to watch, debounce, ignore rules, storms, HEAD moves.

`WatchedRoot` bundles them for one watched root; the watchdog actor
(`live_memory.actors.watchdog`) feeds it the observer's events and routes what `flush` returns.
"""

from __future__ import annotations

from live_memory.watchers.board import WatcherBoard
from live_memory.watchers.debounce import Change, ChangeKind, Debouncer
from live_memory.watchers.head import HeadTracker
from live_memory.watchers.os_watch import Key, OsWatch, native_observer
from live_memory.watchers.path_filter import HEAD_MARKER, PathFilter
from live_memory.watchers.placement import place_watches, record_event, watch_git_dirs
from live_memory.watchers.revalidate import revalidation_events
from live_memory.watchers.watch_table import Owner, WatchTable, effective_total_budget
from live_memory.watchers.watched_root import Flushed, RawKind, WatchedRoot

__all__ = [
    "HEAD_MARKER",
    "Change",
    "ChangeKind",
    "Debouncer",
    "Flushed",
    "HeadTracker",
    "Key",
    "OsWatch",
    "Owner",
    "PathFilter",
    "RawKind",
    "WatchTable",
    "WatchedRoot",
    "WatcherBoard",
    "effective_total_budget",
    "native_observer",
    "place_watches",
    "record_event",
    "revalidation_events",
    "watch_git_dirs",
]
