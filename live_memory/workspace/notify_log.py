"""What changed a workspace's window while forks ran, replayed onto an adopted fork window.

Bounded twice: entries no in-flight fork can still need (at or before the oldest base) are
dropped after every commit and failure, and the content the log holds has a byte cap past
which the oldest entries keep their path and kind but lose their bytes (the adopted window
then marks those files changed instead of holding them: under-awareness, never false
knowledge).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from live_memory.memory import LedgerFact, Reread
from live_memory.workspace.citations import Note
from live_memory.workspace.records import FileEvent

__all__ = ["LogEntry", "NotifyLog"]

LogEntry = FileEvent | tuple[LedgerFact, ...] | Reread | Note


def _bytes(entry: LogEntry) -> int:
    if isinstance(entry, FileEvent | Reread):
        return len(entry.content) if entry.content is not None else 0
    if isinstance(entry, Note):
        return len(entry.text)
    return sum(len(f.text) for f in entry)


class NotifyLog:
    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.seq = 0
        self._entries: list[tuple[int, LogEntry]] = []
        """(seq, entry), oldest first. A list: trimmed a prefix at a time, and indexed by
        `_strip` (a deque allocates a 64-slot block for every workspace, even empty)."""
        self.held_bytes = 0
        self.stripped = 0
        """Entries whose bytes were dropped at the cap (counted for /stats and tests)."""
        self._bare_prefix = 0
        """How many of the oldest entries hold no bytes (where stripping resumes)."""

    def __len__(self) -> int:
        return len(self._entries)

    def append(self, entry: LogEntry) -> None:
        self.seq += 1
        self._entries.append((self.seq, entry))
        self.held_bytes += _bytes(entry)
        if self.held_bytes > self.max_bytes:
            self._strip()

    def since(self, seq: int) -> Iterator[LogEntry]:
        """Entries after `seq`, oldest first."""
        for at, entry in self._entries:
            if at > seq:
                yield entry

    def trim(self, oldest_base: int | None) -> None:
        """Drop what no fork based at `oldest_base` or later needs (None: no fork in flight)."""
        if oldest_base is None:
            self._entries.clear()
            self.held_bytes = 0
            self._bare_prefix = 0
            return
        done = 0
        for at, entry in self._entries:
            if at > oldest_base:
                break
            self.held_bytes -= _bytes(entry)
            done += 1
        del self._entries[:done]
        self._bare_prefix = max(self._bare_prefix - done, 0)

    def oldest_seq(self) -> int | None:
        return self._entries[0][0] if self._entries else None

    def _strip(self) -> None:
        """Oldest first, replace content-bearing events by a bare "write" (the file moved on,
        bytes unknown) until the log is under its cap."""
        i = self._bare_prefix
        while self.held_bytes > self.max_bytes and i < len(self._entries):
            at, entry = self._entries[i]
            if isinstance(entry, FileEvent) and entry.content is not None:
                self.held_bytes -= len(entry.content)
                self._entries[i] = (at, replace(entry, content=None, kind="write"))
                self.stripped += 1
            elif isinstance(entry, Reread) and entry.content is not None:
                # Without its bytes a re-read still says the file moved on: stale.
                self.held_bytes -= len(entry.content)
                self._entries[i] = (at, replace(entry, content=None, outcome="unreadable"))
                self.stripped += 1
            i += 1
        self._bare_prefix = i
