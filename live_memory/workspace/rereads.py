"""Which held files the server must re-read itself, and when: coalesced, paced, one batch out.

A "change" to a file whose content the window holds is not merely flagged: the path is queued
here and the shell reads it off the actor (`ReadFiles`), reporting back `Reread` results.
Bounds: a path is queued once however often it changes (a storm of edits to one file is one
re-read); one batch is out at a time, of at most `batch_max` paths; at most `per_interval`
paths are read per `interval_s` (past that the batch carries a `not_before` the shell waits
for, off the actor). A path touched again while its read is out (another change, a teed
write, an unlink) makes that result outdated: it is dropped, and a change re-queues the path.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from live_memory.config import constants as C
from live_memory.memory import Reread
from live_memory.workspace.effects import ReadFiles

__all__ = ["RereadCounters", "Rereads"]


@dataclass(slots=True)
class RereadCounters:
    requested: int = 0
    """Change events that asked for a re-read (before coalescing)."""
    coalesced: int = 0
    """Of those, how many joined a re-read already queued or out."""
    read: int = 0
    """Paths sent to the shell to read."""
    refreshed: int = 0
    """Re-reads that put new content in the window."""
    unchanged: int = 0
    kept_stale: int = 0
    deleted: int = 0
    outdated: int = 0
    """Results dropped because the path was touched while the read was out."""
    paced: int = 0
    """Batches that had to wait for the next interval (the per-interval cap)."""

    def as_dict(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in RereadCounters.__slots__}


class Rereads:
    # Slotted: one per active workspace (an instance dict costs more than the fields).
    __slots__ = (
        "again",
        "batch_max",
        "batch_out",
        "counters",
        "interval_s",
        "interval_start",
        "out",
        "per_interval",
        "queued",
        "tickets",
        "used",
    )

    def __init__(
        self,
        per_interval: int = C.REREAD_MAX_PER_INTERVAL,
        interval_s: float = C.REREAD_INTERVAL_S,
        batch_max: int = C.REREAD_BATCH_MAX,
    ) -> None:
        self.per_interval = max(1, per_interval)
        self.interval_s = interval_s
        self.batch_max = max(1, batch_max)
        self.queued: dict[str, None] = {}
        """Paths waiting for a read, oldest first (at most one entry per path)."""
        self.out: dict[str, int] = {}
        """Paths whose read is out, with the ticket it carries."""
        self.again: set[str] = set()
        """Paths changed again while their read was out: re-queued when it reports."""
        self.batch_out = False
        self.tickets = itertools.count(1)
        self.interval_start = float("-inf")
        self.used = 0
        self.counters = RereadCounters()

    def __len__(self) -> int:
        return len(self.queued) + len(self.out)

    def waiting(self) -> list[str]:
        """Paths whose new content the window does not have yet (queued or being read)."""
        return [*self.out, *(p for p in self.queued if p not in self.out)]

    def changed(self, path: str) -> None:
        """`path` (held by the window) changed on disk."""
        self.counters.requested += 1
        if path in self.out:
            self.again.add(path)
            self.out[path] = 0  # whatever the read out now returns is outdated
            self.counters.coalesced += 1
        elif path in self.queued:
            self.counters.coalesced += 1
        else:
            self.queued[path] = None

    def touched(self, path: str) -> None:
        """The window learnt `path`'s fate some other way (a teed read or write, an unlink):
        a queued re-read is not needed, a read out is outdated."""
        self.queued.pop(path, None)
        self.again.discard(path)
        if path in self.out:
            self.out[path] = 0

    def clear(self) -> None:
        """A wipe: nothing queued; what is out is outdated."""
        self.queued.clear()
        self.again.clear()
        for path in self.out:
            self.out[path] = 0

    def take(self, now: float) -> ReadFiles | None:
        """The next batch to read, unless one is out or nothing waits."""
        if self.batch_out or not self.queued:
            return None
        if now - self.interval_start >= self.interval_s:
            self.interval_start, self.used = now, 0
        not_before = max(now, self.interval_start)  # a paced interval may not have begun
        if self.used >= self.per_interval:  # this interval is spent: wait for the next
            not_before = self.interval_start + self.interval_s
            self.interval_start, self.used = not_before, 0
            self.counters.paced += 1
        size = min(self.batch_max, self.per_interval - self.used, len(self.queued))
        batch: list[tuple[str, int]] = []
        for path in list(self.queued)[:size]:
            del self.queued[path]
            ticket = next(self.tickets)
            self.out[path] = ticket
            batch.append((path, ticket))
        self.used += len(batch)
        self.counters.read += len(batch)
        self.batch_out = True
        return ReadFiles(tuple(batch), not_before)

    def accept(self, result: Reread) -> bool:
        """Whether `result` is still the path's latest news (then the caller applies it)."""
        ticket = self.out.get(result.path)
        if ticket is None:
            return False
        del self.out[result.path]
        if result.path in self.again:
            self.again.discard(result.path)
            self.queued[result.path] = None
        if ticket != result.ticket:
            self.counters.outdated += 1
            return False
        return True

    def batch_done(self) -> None:
        """The shell reported the batch (every path in it, or failed as a whole)."""
        self.batch_out = False

    def count(self, result: Reread, changed: bool) -> None:
        c = self.counters
        if result.outcome == "missing":
            c.deleted += 1
        elif not changed:
            c.unchanged += 1
        elif result.outcome == "content":
            c.refreshed += 1
        else:
            c.kept_stale += 1
