"""What the watchdog knows of each watched root and what it reports, as plain functions over
the roots and the watch table: the actor (`watchdog.py`) only carries out what they decide.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from live_memory.watchers import RawEvent, WatchedRoot, WatchTable, flags, record_event

__all__ = ["WatchedEntry", "rescans_for", "watcher_status"]

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class WatchedEntry:
    state: WatchedRoot
    polled_because: str | None = None
    meta: dict[str, str] = field(default_factory=dict)
    """Watched git metadata directory (absolute) -> the repository prefix it belongs to."""


def rescans_for(
    events: tuple[RawEvent, ...],
    roots: dict[str, WatchedEntry],
    table: WatchTable,
    now: float,
) -> dict[str, set[str]]:
    """Record one inotify read's events in the roots they belong to; returns, per root, the
    directories to walk again ("" = the whole root, after a queue overflow)."""
    rescan: dict[str, set[str]] = {}
    for wd, mask, name in events:
        if wd == -1 and mask & flags.Q_OVERFLOW:
            logger.warning("inotify queue overflowed: re-validating every root")
            for root, overflowed in roots.items():
                overflowed.state.overflowed(now)
                rescan.setdefault(root, set()).add("")
            continue
        if mask & flags.IGNORED:
            table.forget(wd)
            continue
        for owner in list(table.owners(wd)):
            entry = roots.get(owner.root)
            if entry is None:
                continue
            start = record_event(entry.state, owner, mask, name, now)
            if start is not None:
                rescan.setdefault(owner.root, set()).add(start)
    return rescan


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
        reason = f"{skipped} director(y/ies) could not be watched (path too long or unreadable)"
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
