"""The OS file watcher's logic, free of threads: debounce, ignore rules, storms, HEAD moves.

`WatchedRoot` bundles them for one watched root; the watchdog actor
(`live_memory.actors.watchdog`) feeds it raw events and routes what `flush` returns.
"""

from __future__ import annotations

from live_memory.watchers.debounce import Change, ChangeKind, Debouncer
from live_memory.watchers.head import HeadTracker
from live_memory.watchers.path_filter import HEAD_MARKER, PathFilter
from live_memory.watchers.watched_root import Flushed, RawKind, WatchedRoot

__all__ = [
    "HEAD_MARKER",
    "Change",
    "ChangeKind",
    "Debouncer",
    "Flushed",
    "HeadTracker",
    "PathFilter",
    "RawKind",
    "WatchedRoot",
]
