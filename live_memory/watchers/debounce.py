"""Per-path debouncing: a burst of raw events on one path becomes at most one change.

Only the state before the burst and the state after it matter, so a burst is reduced to
(existed before, exists now): created+modified → add, created+deleted → nothing,
deleted+created → change, modified+deleted → unlink.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from live_memory.config import constants as C

__all__ = ["Change", "ChangeKind", "Debouncer"]

ChangeKind = Literal["add", "change", "unlink"]


@dataclass(frozen=True, slots=True)
class Change:
    """One debounced change of a workspace-relative POSIX path."""

    path: str
    kind: ChangeKind


@dataclass(slots=True)
class _Burst:
    existed: bool
    """Whether the path existed before the first event of the burst."""
    exists: bool
    """Whether it exists after the latest event."""
    first_at: float
    last_at: float


def _settled(burst: _Burst) -> ChangeKind | None:
    if burst.existed:
        return "change" if burst.exists else "unlink"
    return "add" if burst.exists else None


class Debouncer:
    """Coalesces events per path until the path has been quiet for `quiet_s`.

    A path that never goes quiet is still released `max_delay_s` after its first event, so a
    file written continuously (a log) cannot hold its change back forever. Time is passed in,
    so the class is deterministic and thread-free.
    """

    def __init__(
        self, quiet_s: float = C.WATCH_DEBOUNCE_S, max_delay_s: float = C.WATCH_MAX_DELAY_S
    ) -> None:
        self.quiet_s = quiet_s
        self.max_delay_s = max(max_delay_s, quiet_s)
        self._bursts: dict[str, _Burst] = {}

    def __len__(self) -> int:
        return len(self._bursts)

    def add(self, path: str, kind: ChangeKind, now: float) -> None:
        """Record one event; `add`/`change` mean the path exists now, `unlink` that it does not."""
        exists = kind != "unlink"
        burst = self._bursts.get(path)
        if burst is None:
            self._bursts[path] = _Burst(kind != "add", exists, now, now)
        else:
            burst.exists = exists
            burst.last_at = now

    def _due_at(self, burst: _Burst) -> float:
        return min(burst.last_at + self.quiet_s, burst.first_at + self.max_delay_s)

    def next_due(self) -> float | None:
        """When the earliest pending path is released, or None when nothing is pending."""
        return min((self._due_at(b) for b in self._bursts.values()), default=None)

    def pop_due(self, now: float) -> list[Change]:
        """Release every path whose burst is over; bursts that cancel out yield nothing."""
        due = [path for path, burst in self._bursts.items() if self._due_at(burst) <= now]
        changes = []
        for path in due:
            kind = _settled(self._bursts.pop(path))
            if kind is not None:
                changes.append(Change(path, kind))
        return changes
