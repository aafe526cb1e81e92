"""Who owns which OS watch, the directories each covers, and the budgets they are placed under.

A watch is keyed by (directory, recursive); two roots (a workspace nested in another) that
schedule the same watch share it, so it has a set of owners and is removed only when the last
one lets go. Budgets count directories, what inotify pays a kernel watch for: `per_root` for
one root, `total` for all of them, the latter never above a share of the user's kernel limit
(`max_user_watches` is shared with the user's IDEs and tools). A recursive watch covers every
directory below its own; those are counted as the walk finds them.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

from live_memory.config import constants as C
from live_memory.watchers.os_watch import Key

__all__ = ["Owner", "WatchTable", "effective_total_budget"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Owner:
    """A root's claim on a watch: a work-tree directory (`rel`) or a git metadata directory
    of the repository at `repo` (then `rel` is the metadata directory's absolute path)."""

    root: str
    rel: str
    repo: str | None = None


def effective_total_budget(setting: int, limit_file: str = C.WATCH_USER_LIMIT_FILE) -> int:
    """`setting`, capped at WATCH_MAX_SHARE_OF_USER_LIMIT of the kernel's per-user limit."""
    try:
        with open(limit_file, encoding="ascii") as handle:
            user_limit = int(handle.read().strip())
    except (OSError, ValueError):
        return setting
    return max(1, min(setting, int(user_limit * C.WATCH_MAX_SHARE_OF_USER_LIMIT)))


class WatchTable:
    def __init__(self, per_root: int, total: int) -> None:
        self.per_root = per_root
        self.total = total
        self._owners: dict[Key, set[Owner]] = {}
        self._dirs: dict[Key, set[str]] = {}  # the directories each watch covers
        self._by_root: dict[str, set[Key]] = {}

    def __len__(self) -> int:
        """Directories watched, all roots together."""
        return sum(len(d) for d in self._dirs.values())

    def used_by(self, root: str) -> int:
        return sum(len(self._dirs[k]) for k in self._by_root.get(root, ()))

    def room(self, root: str) -> tuple[int, str]:
        """How many more directories `root` may watch, and why no more."""
        per_root, total = self.per_root - self.used_by(root), self.total - len(self)
        if per_root <= total:
            return (
                per_root,
                f"needs more than {self.per_root} watches (LIVE_MEMORY_WATCH_MAX_PER_ROOT)",
            )
        return (
            total,
            f"all {self.total} watches of the server are in use (LIVE_MEMORY_WATCH_MAX_TOTAL)",
        )

    def on(self, root: str, path: str) -> Key | None:
        """`root`'s watch placed on the directory `path` itself."""
        keys = self._by_root.get(root, set())
        return next((k for k in ((path, False), (path, True)) if k in keys), None)

    def covering(self, root: str, path: str) -> Key | None:
        """`root`'s watch on the directory `path`: its own, or a recursive one above it."""
        keys = self._by_root.get(root, set())
        if (key := self.on(root, path)) is not None:
            return key
        while len(path) > len(root):
            path = os.path.dirname(path)
            if (path, True) in keys:
                return (path, True)
        return None

    def claim(self, key: Key, owner: Owner) -> None:
        self._owners.setdefault(key, set()).add(owner)
        self._by_root.setdefault(owner.root, set()).add(key)
        self._dirs.setdefault(key, set()).add(key[0])

    def dirs(self, key: Key) -> set[str]:
        """The directories `key` covers (counted against the budgets; add or discard)."""
        return self._dirs.get(key, set())

    def owners(self, key: Key) -> set[Owner]:
        return self._owners.get(key, set())

    def release(self, root: str, keys: list[Key]) -> list[Key]:
        """Drop `root`'s claims on `keys`; those nobody owns any more (to unschedule)."""
        freed: list[Key] = []
        mine = self._by_root.get(root, set())
        for key in set(keys) & mine:
            mine.discard(key)
            owners = self._owners[key]
            owners -= {o for o in owners if o.root == root}
            if not owners:
                del self._owners[key], self._dirs[key]
                freed.append(key)
        if not mine:
            self._by_root.pop(root, None)
        return freed

    def release_root(
        self, root: str, *, meta_too: bool = True, under: str | None = None
    ) -> list[Key]:
        """Drop `root`'s watches: all, its work tree's only, or those on `under` and below it
        (the directory went away)."""
        prefix = (under or root).rstrip(os.sep) + os.sep
        keys = [
            k
            for k in self._by_root.get(root, ())
            if (meta_too and under is None)
            or (
                any(o.root == root and o.repo is None for o in self.owners(k))
                and (k[0] == under or under is None or k[0].startswith(prefix))
            )
        ]
        return self.release(root, keys)
