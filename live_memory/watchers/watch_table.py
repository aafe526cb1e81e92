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
        self._dirs: dict[Key, set[str]] = {}
        self._by_root: dict[str, set[Key]] = {}
        self._used: dict[str, int] = {}
        self._count = 0

    def __len__(self) -> int:
        """Directories watched, all roots together."""
        return self._count

    def used_by(self, root: str) -> int:
        return self._used.get(root, 0)

    def room_for(self, root: str) -> str | None:
        """None when `root` may watch one more directory, else why not."""
        if self.used_by(root) >= self.per_root:
            return f"needs more than {self.per_root} watches (LIVE_MEMORY_WATCH_MAX_PER_ROOT)"
        if self._count >= self.total:
            return (
                f"all {self.total} watches of the server are in use (LIVE_MEMORY_WATCH_MAX_TOTAL)"
            )
        return None

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
        owners = self._owners.setdefault(key, set())
        if not any(o.root == owner.root for o in owners):
            self._used[owner.root] = self.used_by(owner.root) + len(self._dirs.get(key, ()))
        owners.add(owner)
        self._by_root.setdefault(owner.root, set()).add(key)
        self.add_dir(key, key[0])

    def add_dir(self, key: Key, path: str) -> bool:
        """Count `path` as covered by `key`; False when it already was."""
        dirs = self._dirs.setdefault(key, set())
        if path in dirs:
            return False
        dirs.add(path)
        self._count += 1
        for root in {o.root for o in self._owners.get(key, ())}:
            self._used[root] = self.used_by(root) + 1
        return True

    def has_dir(self, key: Key, path: str) -> bool:
        return path in self._dirs.get(key, ())

    def drop_dir(self, key: Key, path: str) -> None:
        """A directory below a recursive watch is gone."""
        dirs = self._dirs.get(key, set())
        if path != key[0] and path in dirs:
            dirs.discard(path)
            self._count -= 1
            for root in {o.root for o in self._owners.get(key, ())}:
                self._used[root] -= 1

    def owners(self, key: Key) -> set[Owner]:
        return self._owners.get(key, set())

    def release(self, root: str, keys: list[Key]) -> list[Key]:
        """Drop `root`'s claims on `keys`; those nobody owns any more (to unschedule)."""
        freed: list[Key] = []
        mine = self._by_root.get(root, set())
        for key in keys:
            owners = self._owners.get(key, set())
            if key not in mine:
                continue
            mine.discard(key)
            owners -= {o for o in owners if o.root == root}
            dirs = self._dirs.get(key, set())
            self._used[root] -= len(dirs)
            if not owners:
                del self._owners[key]
                self._count -= len(self._dirs.pop(key, ()))
                freed.append(key)
        if not mine:
            self._by_root.pop(root, None)
            self._used.pop(root, None)
        return freed

    def release_root(self, root: str, *, meta_too: bool = True) -> list[Key]:
        keys = [
            k
            for k in self._by_root.get(root, ())
            if meta_too or any(o.root == root and o.repo is None for o in self.owners(k))
        ]
        return self.release(root, keys)

    def release_under(self, root: str, path: str) -> list[Key]:
        """Drop `root`'s work-tree watches on `path` and below it (the directory went away)."""
        prefix = path.rstrip(os.sep) + os.sep
        keys = [
            k
            for k in self._by_root.get(root, ())
            if (k[0] == path or k[0].startswith(prefix))
            and any(o.root == root and o.repo is None for o in self.owners(k))
        ]
        return self.release(root, keys)
