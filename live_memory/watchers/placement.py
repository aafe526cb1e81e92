"""Placing a root's inotify watches and reading its events (driven by the watchdog actor).

A watch goes on every directory the root's walk yields (never `.git`, a symlink or an ignored
tree) while the budget has room; the git metadata directories of each repository get one
too, for HEAD moves, even when they live outside the work tree (worktrees, submodules).
"""

from __future__ import annotations

import errno
import logging
import os
import time

from live_memory.watchers.inotify_source import InotifySource, flags
from live_memory.watchers.watch_table import Owner, WatchTable
from live_memory.watchers.watched_root import WatchedRoot

__all__ = ["HEAD_NAMES", "place_watches", "record_event", "watch_git_dirs"]

logger = logging.getLogger(__name__)

_LIMIT_ERRNOS = frozenset({errno.ENOSPC, errno.EMFILE, errno.ENFILE})
HEAD_NAMES = frozenset({"HEAD", "HEAD.lock", "packed-refs", "packed-refs.lock", "ORIG_HEAD"})
"""Entries of a git metadata directory whose change can mean HEAD moved."""


def place_watches(
    source: InotifySource,
    table: WatchTable,
    root: str,
    state: WatchedRoot,
    start: str,
    *,
    report: bool,
) -> str | None:
    """Watch every directory the walk yields below `start` that is not watched yet; why it
    failed, or None. With `report`, the files found in newly watched directories are
    recorded as created (they appeared before their directory had a watch)."""
    watched = table.dirs_of(root)
    now = time.monotonic()
    for rel in state.directories(start):
        if rel in watched:
            continue
        why = table.room_for(root)
        if why is not None:
            return why
        path = os.path.join(root, rel) if rel else root
        try:
            wd = source.add(path)
        except OSError as exc:
            if exc.errno in _LIMIT_ERRNOS:
                # Someone else holds the rest of the kernel's budget: stay below it.
                table.total = max(1, len(table))
                return f"hit the kernel's inotify limit ({exc})"
            state.skipped_dirs += 1  # too deep for a path, gone, unreadable
            continue
        table.claim(wd, Owner(root, rel))
        if report:
            state.found_directory(path, now)
    return None


def watch_git_dirs(
    source: InotifySource, table: WatchTable, root: str, state: WatchedRoot, meta: dict[str, str]
) -> None:
    """Watch where each repository's HEAD and refs live; `meta` maps each watched metadata
    directory to its repository's prefix (updated in place)."""
    for prefix, repo in state.repos.repos.items():
        if repo.dirs is None:
            continue
        dirs = [*repo.dirs.head_dirs, os.path.join(repo.dirs.gitdir, "logs")]
        for path in dict.fromkeys(dirs):
            if path in meta or not os.path.isdir(path):
                continue
            try:
                wd = source.add(path)
            except OSError as exc:
                logger.warning("%s: cannot watch %s for HEAD moves: %s", root, path, exc)
                continue
            table.claim(wd, Owner(root, path, prefix))
            meta[path] = prefix


def record_event(state: WatchedRoot, owner: Owner, mask: int, name: str, now: float) -> str | None:
    """Record one event of a watched directory; a directory to walk for new watches
    ('' = the whole root), or None."""
    if owner.repo is not None:
        in_heads = owner.rel.endswith(os.sep + os.path.join("refs", "heads"))
        if name in HEAD_NAMES or in_heads:
            state.record_head(owner.repo, now)
        return None
    rel = f"{owner.rel}/{name}" if owner.rel else name
    path = os.path.join(owner.root, rel)
    if mask & flags.ISDIR:
        if mask & (flags.CREATE | flags.MOVED_TO):
            return rel  # watch the new directory and report what it holds
        if mask & (flags.DELETE | flags.MOVED_FROM):
            state.record("deleted", path, now, directory=True)
        return None
    if mask & (flags.DELETE | flags.MOVED_FROM):
        state.record("deleted", path, now)
    elif mask & (flags.CREATE | flags.MOVED_TO):
        state.record("created", path, now)
    elif mask & flags.MODIFY:
        state.record("modified", path, now)
    return "" if state.rescan_due else None
