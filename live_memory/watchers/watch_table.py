"""Who owns which inotify watch, and the budgets they are placed under.

One inotify instance serves every root, and the kernel returns the same watch descriptor
when two roots (a workspace nested in another) watch one directory, so a descriptor has a
set of owners and is removed only when the last one lets go. Budgets count descriptors:
`per_root` for one root, `total` for all of them, the latter never above a share of the
user's kernel limit (`max_user_watches` is shared with the user's IDEs and tools).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from live_memory.config import constants as C

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
        self._owners: dict[int, set[Owner]] = {}
        self._by_root: dict[str, set[int]] = {}

    def __len__(self) -> int:
        return len(self._owners)

    def used_by(self, root: str) -> int:
        return len(self._by_root.get(root, ()))

    def room_for(self, root: str) -> str | None:
        """None when `root` may place one more watch, else why not."""
        if self.used_by(root) >= self.per_root:
            return f"needs more than {self.per_root} watches (LIVE_MEMORY_WATCH_MAX_PER_ROOT)"
        if len(self._owners) >= self.total:
            return (
                f"all {self.total} watches of the server are in use (LIVE_MEMORY_WATCH_MAX_TOTAL)"
            )
        return None

    def dirs_of(self, root: str) -> set[str]:
        """The work-tree directories `root` watches (root-relative)."""
        return {
            o.rel
            for wd in self._by_root.get(root, ())
            for o in self._owners.get(wd, ())
            if o.root == root and o.repo is None
        }

    def claim(self, wd: int, owner: Owner) -> None:
        self._owners.setdefault(wd, set()).add(owner)
        self._by_root.setdefault(owner.root, set()).add(wd)

    def owners(self, wd: int) -> set[Owner]:
        return self._owners.get(wd, set())

    def forget(self, wd: int) -> None:
        """The kernel dropped `wd` (its directory is gone)."""
        for owner in self._owners.pop(wd, ()):
            self._by_root.get(owner.root, set()).discard(wd)

    def release_root(self, root: str, *, meta_too: bool = True) -> list[int]:
        """Drop `root`'s claims; the descriptors nobody owns any more (to remove)."""
        freed: list[int] = []
        for wd in list(self._by_root.get(root, ())):
            owners = self._owners.get(wd, set())
            mine = {o for o in owners if o.root == root and (meta_too or o.repo is None)}
            if not mine:
                continue
            owners -= mine
            if not any(o.root == root for o in owners):
                self._by_root[root].discard(wd)
            if not owners:
                del self._owners[wd]
                freed.append(wd)
        if not self._by_root.get(root):
            self._by_root.pop(root, None)
        return freed
