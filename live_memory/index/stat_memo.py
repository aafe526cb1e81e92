"""Which files the index last read from disk, at which stat: an unchanged file costs a stat.

A "change" event (a hook, the watcher, a tool's read) asks the index thread to bring one file
up to date. Without this memo each one cost a SQLite look-up of the file's stamp, a read
through the jail and a SHA-256 of the bytes, only to find them unchanged (hooks and the
watcher both report a save; agents re-read the files they work on).

The rule is git's "racily clean" one. A stat is trusted to stand for the bytes read after it
only when its mtime and ctime are older, by more than the file system's timestamp granularity,
than the moment the stat was taken: a write in the same clock tick as the read could leave
size, mtime and ctime all unchanged. A racy stat is not remembered, so the next event reads
and hashes the file again, and by then its stamp is old enough to be trusted.

Only the index thread uses it (not thread-safe). Bounded: INDEX_STAT_MEMO_MAX paths per
workspace, the oldest forgotten first (a forgotten file is read and hashed once more).
"""

from __future__ import annotations

import os

from live_memory.config import constants as C

__all__ = ["ABSENT", "StatKey", "StatMemo", "stat_key"]

StatKey = tuple[int, int, int, int, int]
ABSENT: StatKey = (-1, -1, -1, -1, -1)
"""The key of a file that does not exist (and has no rows in the index)."""


def stat_key(st: os.stat_result) -> StatKey:
    """What a stat says about a file's bytes: any write changes one of these."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


class StatMemo:
    __slots__ = ("_cap", "_racy_ns", "_seen")

    def __init__(
        self, cap: int = C.INDEX_STAT_MEMO_MAX, racy_s: float = C.INDEX_STAT_RACY_S
    ) -> None:
        self._cap = max(1, cap)
        self._racy_ns = int(racy_s * 1e9)
        self._seen: dict[str, StatKey] = {}

    def unchanged(self, rel: str, key: StatKey) -> bool:
        """True when the index holds what `rel`'s bytes were when they had this stat."""
        return self._seen.get(rel) == key

    def read(self, rel: str, key: StatKey, taken_ns: int) -> None:
        """The index now holds `rel` as read from disk after a stat with `key`, taken at
        `taken_ns` (time.time_ns() before the stat); ABSENT for a file that is not there."""
        self._seen.pop(rel, None)
        if key != ABSENT and max(key[3], key[4]) >= taken_ns - self._racy_ns:
            return  # racy: a write within the same tick would not show in the stat
        if len(self._seen) >= self._cap:
            self._seen.pop(next(iter(self._seen)))
        self._seen[rel] = key

    def forget(self, rel: str) -> None:
        """The index's rows for `rel` came from elsewhere (teed bytes): read it next time."""
        self._seen.pop(rel, None)

    def __len__(self) -> int:
        return len(self._seen)
