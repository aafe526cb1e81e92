"""Notifications for held workspaces, gathered on the event loop and told together.

A hook POSTs one /notify per file event, on a new connection each. Telling the workspace
actor per request woke a pool thread per request (a queue put, a futex, the GIL handed to
the pool and back): under 1,500 sequential hook requests that hop was half the server's CPU
per request, and 4 of its 6 context switches. So the edge gathers the parsed events of held
workspaces for up to NOTIFY_BATCH_DELAY_S (25 ms) and tells each actor one Notify for
the lot, in arrival order.

What a 200 promised stays true: the batch is valid and queued, and it is applied before any
later request to that workspace is handled, because the edge flushes what is gathered before
it sends any other message to any workspace (service_base `_send`, the dashboard's
inspection, the shutdown drain). Bounded: at NOTIFY_BATCH_MAX_EVENTS events or
NOTIFY_BATCH_MAX_BYTES of content the batch is flushed at once.

This module is the pure part (what is gathered, when it is full, the merged messages); the
timer and the tells are the service's.
"""

from __future__ import annotations

from live_memory.config import constants as C
from live_memory.workspace import FileEvent

__all__ = ["NotifyBacklog", "NotifyBatch", "content_chars"]


def content_chars(events: tuple[FileEvent, ...] | list[FileEvent]) -> int:
    return sum(len(e.content) for e in events if e.content is not None)


class NotifyBacklog:
    """Content told to each workspace actor (by its urn) and not yet known applied.

    A 200 for a held workspace is sent before its actor applies the events, so hooks faster
    than the actor piled their content up in its mailbox (8 concurrent hooks teeing 96 KB
    reads: +240 MB, and /stats, queued behind them, timed out). Past `max_bytes` the edge
    sends the next batch with a reply and waits for it (service `notify`): the actor applies
    in order, so that reply confirms everything told before it. On the event loop only.
    At most NOTIFY_BACKLOG_WORKSPACES_MAX actors are counted (the oldest forgotten)."""

    __slots__ = ("_applied", "_told", "max_bytes")

    def __init__(self, max_bytes: int | None = None) -> None:
        self.max_bytes = C.NOTIFY_BACKLOG_MAX_BYTES if max_bytes is None else max_bytes
        self._told: dict[str, int] = {}
        self._applied: dict[str, int] = {}

    def full(self, urn: str) -> bool:
        return self._told.get(urn, 0) - self._applied.get(urn, 0) >= self.max_bytes

    def told(self, urn: str, chars: int) -> int:
        """Count `chars` told to `urn`; returns the mark `applied` takes once they are."""
        total = self._told.pop(urn, 0) + chars
        self._told[urn] = total  # most recently told last
        if len(self._told) > C.NOTIFY_BACKLOG_WORKSPACES_MAX:
            oldest = next(iter(self._told))
            del self._told[oldest]
            self._applied.pop(oldest, None)
        return total

    def applied(self, urn: str, mark: int) -> None:
        """Everything told to `urn` up to `mark` was applied."""
        if mark >= self._told.get(urn, 0):
            self._told.pop(urn, None)
            self._applied.pop(urn, None)
        else:
            self._applied[urn] = max(self._applied.get(urn, 0), mark)


class NotifyBatch:
    """Events per workspace name, in arrival order, up to the caps."""

    __slots__ = ("_bytes", "_count", "_entries", "max_bytes", "max_events")

    def __init__(
        self,
        *,
        max_events: int = C.NOTIFY_BATCH_MAX_EVENTS,
        max_bytes: int = C.NOTIFY_BATCH_MAX_BYTES,
    ) -> None:
        self.max_events = max_events
        self.max_bytes = max_bytes
        self._entries: list[tuple[str, list[FileEvent]]] = []
        self._count = 0
        self._bytes = 0

    def __bool__(self) -> bool:
        return bool(self._entries)

    def add(self, cwd: str, events: tuple[FileEvent, ...] | list[FileEvent]) -> bool:
        """Gather `events` for `cwd`; True when the batch is full and must be flushed now."""
        entries = self._entries
        if entries and entries[-1][0] == cwd:
            entries[-1][1].extend(events)  # one message per run of the same name
        else:
            entries.append((cwd, list(events)))
        self._count += len(events)
        self._bytes += content_chars(events)
        return self._count >= self.max_events or self._bytes >= self.max_bytes

    def take(self) -> list[tuple[str, tuple[FileEvent, ...]]]:
        """Everything gathered, in order (runs of one name merged), and empty the batch."""
        entries, self._entries = self._entries, []
        self._count = self._bytes = 0
        return [(cwd, tuple(events)) for cwd, events in entries]
