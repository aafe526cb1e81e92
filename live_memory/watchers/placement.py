"""Placing a root's watches and reading their events (driven by the watchdog actor).

watchdog cannot leave a directory out of a recursive watch, and inotify pays a kernel watch per
directory, so the walk decides: a subtree that holds no ignored directory and no `.git` gets
one recursive watch, a directory above one a watch of its own entries only (never `.git`, a
symlink or an ignored tree), within the budgets. The git metadata directories of each
repository get a watch too, for HEAD moves, even outside the work tree (worktrees, submodules).
"""

from __future__ import annotations

import errno
import logging
import os
import time
from typing import cast

from watchdog.events import FileSystemEvent

from live_memory.watchers.os_watch import Key, OsWatch
from live_memory.watchers.watch_table import Owner, WatchTable
from live_memory.watchers.watched_root import RawKind, WatchedRoot

__all__ = ["HEAD_NAMES", "place_watches", "record_event", "watch_git_dirs"]

logger = logging.getLogger(__name__)

_LIMIT_ERRNOS = frozenset({errno.ENOSPC, errno.EMFILE, errno.ENFILE})
HEAD_NAMES = frozenset({"HEAD", "HEAD.lock", "packed-refs", "packed-refs.lock", "ORIG_HEAD"})
"""Entries of a git metadata directory whose change can mean HEAD moved."""
WATCH_RECURSIVE_MAX_HEIGHT = 64  # deeper trees are watched a directory at a time: watchdog's
# bookkeeping of a recursive watch costs time quadratic in its depth
WATCH_MAX_SCHEDULED = 4_096  # watchdog runs one thread (~22 KB) per scheduled watch


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
    watch: OsWatch, table: WatchTable, root: str, state: WatchedRoot, start: str, *, report: bool
) -> str | None:
    """Watch every directory below `start` not watched yet; why it failed, or None. With
    `report`, the files found in newly watched directories are recorded as created (they
    appeared before their directory had a watch)."""
    now = time.monotonic()
    plan = _plan(state, start, table.per_root + 1)
    if plan is None:
        return f"needs more than {table.per_root} watches (LIVE_MEMORY_WATCH_MAX_PER_ROOT)"
    order, own = plan
    enclosing = table.covering(root, os.path.join(root, start) if start else root)
    if enclosing is not None and enclosing[1] and own:
        # Something not to watch appeared inside a recursive watch (a new node_modules/),
        # which watchdog extended to it: split that watch like any tree holding one. It goes
        # once its replacements are in place: nothing goes unwatched, nothing is to report.
        freed = table.release(root, [enclosing])
        why = place_watches(
            watch, table, root, state, state.filter.relative(enclosing[0]) or "", report=False
        )
        for key in freed:
            watch.remove(key)
        return why
    room, why = table.room(root)
    recursive_above: dict[str, Key] = {}  # the recursive watch each walked directory is under
    for rel in order:
        path = os.path.join(root, rel) if rel else root
        above = recursive_above.get(rel.rpartition("/")[0]) if rel != start else None
        covered = above or (table.covering(root, path) if rel == start else table.on(root, path))
        if covered is not None and covered[1]:
            recursive_above[rel] = covered
        if covered is not None and (not covered[1] or path in table.dirs(covered)):
            continue  # watched already
        if room <= 0:
            return why
        room -= 1
        if covered is not None:
            table.dirs(covered).add(path)  # below a recursive watch, which watches it already
        elif failure := _schedule(watch, table, Owner(root, rel), path, rel not in own):
            if failure != "skipped":
                return failure
            state.skipped_dirs += 1
            continue
        elif rel not in own:
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


def record_event(
    state: WatchedRoot, owner: Owner, event: FileSystemEvent, now: float
) -> str | None:
    """Record one event of a watch; a directory to walk for new watches ('' = the whole
    root), or None."""
    src, dest = os.fsdecode(event.src_path), os.fsdecode(event.dest_path) or None
    if owner.repo is not None:
        heads = os.sep + os.path.join("refs", "heads")
        if any(
            p and (os.path.basename(p) in HEAD_NAMES or os.path.dirname(p).endswith(heads))
            for p in (src, dest)
        ):
            state.record_head(owner.repo, now)
        return None
    kind = cast(RawKind, event.event_type)  # the observer passes only these kinds
    state.record(kind, src, now, dest=dest, directory=event.is_directory)
    if event.is_directory and kind in ("created", "moved"):
        rel = state.filter.relative(dest or src)
        if rel is not None and ".git" not in rel.split("/"):
            return rel  # watch the new directory and report what it holds
        return None
    return "" if state.rescan_due else None
