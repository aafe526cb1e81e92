"""Placing a root's OS watches and reading their events (driven by the watchdog actor).

With inotify every watched directory costs a kernel watch, and watchdog has no way to leave a
directory out of a recursive watch, so the walk decides: a subtree that holds no ignored
directory and no `.git` gets one recursive watch, a directory above one of those a watch of
its own entries only (never `.git`, a symlink or an ignored tree), all within the budgets.
FSEvents and the Windows API watch a whole tree for the price of one: the root gets one
recursive watch and the ignored paths are dropped as their events come. The git metadata
directories of each repository get a watch too, for HEAD moves, even when they live outside
the work tree (worktrees, submodules).
"""

from __future__ import annotations

import errno
import logging
import os
import time

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
)

from live_memory.watchers.os_watch import Key, OsWatch
from live_memory.watchers.watch_table import Owner, WatchTable
from live_memory.watchers.watched_root import RawKind, WatchedRoot

__all__ = ["HEAD_NAMES", "place_watches", "record_event", "watch_git_dirs"]

logger = logging.getLogger(__name__)

_LIMIT_ERRNOS = frozenset({errno.ENOSPC, errno.EMFILE, errno.ENFILE})
HEAD_NAMES = frozenset({"HEAD", "HEAD.lock", "packed-refs", "packed-refs.lock", "ORIG_HEAD"})
"""Entries of a git metadata directory whose change can mean HEAD moved."""
WATCH_RECURSIVE_MAX_HEIGHT = 64  # a deeper subtree is watched one directory at a time: watchdog's
# bookkeeping of a recursive watch costs time quadratic in its depth
WATCH_MAX_SCHEDULED = 4_096  # watchdog runs one thread (~22 KB) per scheduled watch
_FILE_KINDS: dict[type[FileSystemEvent], RawKind] = {
    FileCreatedEvent: "created",
    FileModifiedEvent: "modified",
    FileDeletedEvent: "deleted",
    FileMovedEvent: "moved",
}


def _schedule(watch: OsWatch, table: WatchTable, owner: Owner, path: str, recursive: bool) -> str:
    """Schedule one watch; '' when placed, else why it could not be."""
    if len(watch) >= WATCH_MAX_SCHEDULED:
        return f"needs more than the server's {WATCH_MAX_SCHEDULED} OS watches"
    try:
        key = watch.add(path, recursive=recursive)
    except OSError as exc:
        if exc.errno in _LIMIT_ERRNOS:
            # Someone else holds the rest of the kernel's budget: stay below it.
            table.total = max(1, len(table))
            return f"hit the kernel's inotify limit ({exc})"
        return "skipped"  # too deep for a path, gone, unreadable
    table.claim(key, owner)
    return ""


def _plan(state: WatchedRoot, start: str, limit: int) -> tuple[list[str], set[str]] | None:
    """The directories below `start` to watch (breadth first) and those that need a watch of
    their own (an ignored or `.git` directory, or too deep a tree, below them); None when
    there are more than `limit`."""
    order: list[str] = []
    own: set[str] = set()
    height: dict[str, int] = {}
    for rel in state.directories(start, own):
        if len(order) >= limit:
            return None
        order.append(rel)
    for rel in reversed(order):  # children before their parents
        if height.get(rel, 0) > WATCH_RECURSIVE_MAX_HEIGHT:
            own.add(rel)
        if rel == start:
            break
        parent = rel.rpartition("/")[0]
        height[parent] = max(height.get(parent, 0), height.get(rel, 0) + 1)
        if rel in own:
            own.add(parent)
    return order, own


def place_watches(
    watch: OsWatch,
    table: WatchTable,
    root: str,
    state: WatchedRoot,
    start: str,
    *,
    report: bool,
) -> str | None:
    """Watch every directory below `start` not watched yet; why it failed, or None. With
    `report`, the files found in newly watched directories are recorded as created (they
    appeared before their directory had a watch)."""
    now = time.monotonic()
    start_path = os.path.join(root, start) if start else root
    if not watch.per_directory:
        if table.covering(root, root) is None:
            failure = _schedule(watch, table, Owner(root, ""), root, recursive=True)
            if failure:
                return failure
        if report and start:
            state.found_directory(start_path, now)
        return None
    plan = _plan(state, start, table.per_root + 1)
    if plan is None:
        return f"needs more than {table.per_root} watches (LIVE_MEMORY_WATCH_MAX_PER_ROOT)"
    order, own = plan
    enclosing = table.covering(root, start_path)
    if enclosing is not None and enclosing[1] and own:
        # Something not to watch appeared inside a recursive watch (a new node_modules/),
        # which watchdog extended to it: split that watch like any tree holding one. It goes
        # once its replacements are in place, so nothing goes unwatched and nothing is
        # to report.
        freed = table.release(root, [enclosing])
        start = state.filter.relative(enclosing[0]) or ""
        why = place_watches(watch, table, root, state, start, report=False)
        for key in freed:
            watch.remove(key)
        return why
    recursive_above: dict[str, Key] = {}  # the recursive watch each walked directory is under
    for rel in order:
        path = os.path.join(root, rel) if rel else root
        above = recursive_above.get(rel.rpartition("/")[0]) if rel != start else None
        covered = above or (table.covering(root, path) if rel == start else table.on(root, path))
        if covered is not None and covered[1]:
            recursive_above[rel] = covered
            if table.has_dir(covered, path):
                continue
        elif covered is not None:
            continue  # watched already
        why = table.room_for(root)
        if why is not None:
            return why
        if covered is not None:
            table.add_dir(covered, path)  # below a recursive watch, which watches it already
        else:
            recursive = rel not in own
            failure = _schedule(watch, table, Owner(root, rel), path, recursive)
            if failure == "skipped":
                state.skipped_dirs += 1
                continue
            if failure:
                return failure
            if recursive:
                recursive_above[rel] = (path, True)
        if report:
            state.found_directory(path, now)
    return None


def watch_git_dirs(
    watch: OsWatch, table: WatchTable, root: str, state: WatchedRoot, meta: dict[str, str]
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
                key = watch.add(path, recursive=False)
            except OSError as exc:
                logger.warning("%s: cannot watch %s for HEAD moves: %s", root, path, exc)
                continue
            table.claim(key, Owner(root, path, prefix))
            meta[path] = prefix


def _path(raw: bytes | str) -> str:
    return os.fsdecode(raw)


def record_event(
    state: WatchedRoot, owner: Owner, event: FileSystemEvent, now: float
) -> str | None:
    """Record one event of a watch; a directory to walk for new watches ('' = the whole
    root), or None."""
    src = _path(event.src_path)
    dest = _path(event.dest_path) if isinstance(event, (FileMovedEvent, DirMovedEvent)) else None
    if owner.repo is not None:
        for path in (src, dest):
            if path and (
                os.path.basename(path) in HEAD_NAMES
                or os.path.dirname(path).endswith(os.sep + os.path.join("refs", "heads"))
            ):
                state.record_head(owner.repo, now)
        return None
    if isinstance(event, (DirDeletedEvent, DirMovedEvent)):
        state.record("deleted", src, now, directory=True)
    if isinstance(event, (DirCreatedEvent, DirMovedEvent)):
        rel = state.filter.relative(dest or src)
        if rel is not None and ".git" not in rel.split("/"):
            return rel  # watch the new directory and report what it holds
        return None
    kind = _FILE_KINDS.get(type(event))
    if kind is not None:
        state.record(kind, src, now, dest=dest or None)
    return "" if state.rescan_due else None
