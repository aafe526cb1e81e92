"""What the watchdog knows of each watched root and what it reports, as plain functions over
the roots and the watch table: the actor (`watchdog.py`) only carries out what they decide.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field

from watchdog.events import DirDeletedEvent, DirMovedEvent, FileSystemEvent

from live_memory.watchers import Key, OsWatch, Owner, WatchedRoot, WatchTable, record_event

__all__ = ["WatchedEntry", "rescans_for", "watcher_status"]

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class WatchedEntry:
    state: WatchedRoot
    polled_because: str | None = None
    meta: dict[str, str] = field(default_factory=dict)
    """Watched git metadata directory (absolute) -> the repository prefix it belongs to."""


def rescans_for(
    events: list[tuple[Key, FileSystemEvent]],
    lost: bool,
    *,
    roots: dict[str, WatchedEntry],
    table: WatchTable,
    watch: OsWatch,
    now: float,
) -> dict[str, set[str]]:
    """Record one drained batch of events in the roots they belong to; returns, per root, the
    directories to walk again ("" = the whole root, after events were lost)."""
    rescan: dict[str, set[str]] = {}
    if lost:
        logger.warning("file events were lost (queue overflow): re-validating every root")
        for root, overflowed in roots.items():
            overflowed.state.overflowed(now)
            rescan.setdefault(root, set()).add("")
    for key, event in events:
        owners = set(table.owners(key))  # a copy: releasing a watch empties its set
        if owners and isinstance(event, (DirDeletedEvent, DirMovedEvent)):
            # Its watches (and those below it) watch nothing any more.
            gone = os.fsdecode(event.src_path)
            if gone != key[0]:
                table.dirs(key).discard(gone)
            for root in {o.root for o in owners if o.repo is None}:
                for freed in table.release_root(root, under=gone):
                    watch.remove(freed)
        for owner in list(owners or _by_path(os.fsdecode(event.src_path), roots)):
            entry = roots.get(owner.root)
            if entry is None:
                continue
            start = record_event(entry.state, owner, event, now)
            if start is not None:
                rescan.setdefault(owner.root, set()).add(start)
    return rescan


def _by_path(path: str, roots: dict[str, WatchedEntry]) -> set[Owner]:
    """The roots holding `path`, for an event of a watch removed since it was seen."""
    return {Owner(root, "") for root in roots if path.startswith(root.rstrip(os.sep) + os.sep)}


def watcher_status(
    mode: str, degraded_reason: str | None, roots: dict[str, WatchedEntry], table: WatchTable
) -> dict[str, object]:
    """The watcher part of /health: mode, budgets, and why it is degraded if it is."""
    polled = [r for r, e in roots.items() if e.polled_because is not None]
    skipped = sum(e.state.skipped_dirs for e in roots.values())
    reason = degraded_reason
    if reason is None and polled:
        first = roots[polled[0]].polled_because
        reason = f"{len(polled)} root(s) polled instead of watched: {polled[0]} {first}"
    if reason is None and skipped:
        reason = f"{skipped} director(y/ies) could not be watched (too deep or unreadable)"
    return {
        "mode": mode,
        "roots": len(roots),
        "degraded_reason": reason,
        "roots_polled": len(polled),
        "watches": len(table),
        "watch_budget": {"per_root": table.per_root, "total": table.total},
        "storms": sum(1 for e in roots.values() if e.state.in_storm),
        "pending_paths": sum(e.state.pending for e in roots.values()),
    }
