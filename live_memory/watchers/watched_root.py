"""Everything the watcher keeps for one watched root: repositories, debouncer, storm state.

Plain state driven by the watchdog actor: raw events go in through `record`, the walk that
places watches comes from `directories`, and `flush` says what to route. Time is passed in;
git runs only when HEAD moved, a directory vanished, or the ignore rules were edited, never
once per changed path.

A storm (a checkout, an `npm ci`, a formatter over the whole tree) is not routed path by
path: once more than `WATCH_STORM_PATHS` paths settle within `WATCH_STORM_WINDOW_S`, the
root is "in a storm" and `flush` asks for one re-validation of what the window holds
instead, at most every `WATCH_STORM_REVALIDATE_S` and once more when it has been quiet for
`WATCH_STORM_QUIET_S`.
"""

from __future__ import annotations

import logging
import os
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from live_memory.config import constants as C
from live_memory.watchers.debounce import Change, ChangeKind, Debouncer
from live_memory.watchers.git_process import run_git
from live_memory.watchers.ignore import GITIGNORE
from live_memory.watchers.path_filter import HEAD_MARKER, PathFilter
from live_memory.watchers.repos import Repo, RepoSet

__all__ = ["Flushed", "RawKind", "WatchedRoot"]

logger = logging.getLogger(__name__)

RawKind = Literal["created", "modified", "deleted", "moved"]

_RULES_SUFFIX = "/" + GITIGNORE
WATCH_MAX_DEPTH = 256  # directories deeper below a root are not watched (and reported so)
_FILE_KINDS: dict[str, ChangeKind] = {"created": "add", "modified": "change", "deleted": "unlink"}


@dataclass(frozen=True, slots=True)
class Flushed:
    """What one flush of a root releases."""

    changes: list[Change]
    revalidate: bool = False
    """Too many paths to route: re-check every file the window holds instead."""
    tree_stale: bool = False
    """HEAD moved or many files came or went: the directory tree should be rebuilt."""

    def __bool__(self) -> bool:
        return bool(self.changes) or self.revalidate or self.tree_stale


class WatchedRoot:
    """One root's pending changes; `flush` yields the debounced, filtered result."""

    def __init__(
        self,
        root: str,
        *,
        file_globs: tuple[str, ...] = (),
        vendored: bool = False,
        quiet_s: float = C.WATCH_DEBOUNCE_S,
        max_delay_s: float = C.WATCH_MAX_DELAY_S,
        storm_paths: int = C.WATCH_STORM_PATHS,
    ) -> None:
        self.filter = PathFilter(root, file_globs, vendored=vendored)
        self.root = self.filter.root
        self.debouncer = Debouncer(quiet_s, max_delay_s)
        self.repos = RepoSet(self.root)
        self.storm_paths = storm_paths
        self._heads_touched: set[str] = set()
        self._storm_last: float | None = None
        self._storm_touched = 0.0
        """The last event recorded while in a storm (it keeps the storm going)."""
        """When the current storm last released paths (None: no storm)."""
        self._storm_revalidated = 0.0
        self._shape_changes = 0
        self._recent: deque[tuple[float, int]] = deque(maxlen=C.WATCH_STORM_RATE_SLOTS)
        self.skipped_dirs = 0
        """Directories the walk could not enter (too deep, unreadable)."""
        self.rescan_due = False
        """The ignore rules changed: directories they no longer ignore need watches."""

    # --- the walk that places watches ------------------------------------------------------
    def directories(self, start: str = "", pruned: set[str] | None = None) -> Iterator[str]:
        """Root-relative directories to watch below (and including) `start`, breadth first;
        those in which a directory was left out (`.git` or ignored) are added to `pruned`.

        Iterative (a 10,000-level tree cannot exhaust the stack), never enters `.git`, a
        symlink, an ignored or a vendored directory; loads `.gitignore` files and registers nested
        repositories on the way, so their rules apply to what is below them.
        """
        queue: deque[str] = deque([start])
        while queue:
            rel = queue.popleft()
            path = os.path.join(self.root, rel) if rel else self.root
            try:
                with os.scandir(path) as iterator:
                    entries = [(e.name, e.is_dir(follow_symlinks=False)) for e in iterator]
            except OSError as exc:
                self.skipped_dirs += 1
                logger.debug("%s: cannot list %s: %s", self.root, rel or ".", exc)
                continue
            names = {name for name, _ in entries}
            if rel and ".git" in names:
                self.repos.add(rel)
            if GITIGNORE in names:
                repo = self.repos.owner(f"{rel}/{GITIGNORE}" if rel else GITIGNORE)
                repo.rules.load_dir(repo.inner(rel))
            yield rel
            if rel.count("/") + 1 >= WATCH_MAX_DEPTH and any(d for _, d in entries):
                self.skipped_dirs += 1
                if pruned is not None:
                    pruned.add(rel)
                continue
            for name, is_dir in sorted(entries):
                if not is_dir:
                    continue
                child = f"{rel}/{name}" if rel else name
                if name != ".git" and not self.skipped(child, parent_ok=True):
                    queue.append(child)
                elif pruned is not None:
                    pruned.add(rel)

    def skipped(self, rel_dir: str, *, parent_ok: bool = False) -> bool:
        """Is directory `rel_dir` left unwatched: ignored by git, or vendored?"""
        return self.filter.skipped_dir(rel_dir) or self.repos.ignored(
            rel_dir, is_dir=True, parent_ok=parent_ok
        )

    # --- events ----------------------------------------------------------------------------
    def record(
        self,
        kind: RawKind,
        path: str,
        now: float,
        *,
        dest: str | None = None,
        directory: bool = False,
    ) -> None:
        """Take one raw event; a move is the unlink of its source and the add of its target."""
        if kind == "moved":
            self.record("deleted", path, now, directory=directory)
            if dest is not None:
                self.record("created", dest, now, directory=directory)
            return
        if self._storm_last is not None and not directory and not path.endswith(_RULES_SUFFIX):
            # In a storm no path is routed one by one: noting the activity is enough, and
            # keeps the watcher's cost per event (and its hold on the interpreter) tiny.
            self._storm_touched = now
            return
        rel = self.filter.classify(path, directory=directory)
        if rel is None:
            return
        if rel == HEAD_MARKER:
            self.record_head("", now)
        elif directory:
            # Files inside a created directory are found by the walk that watches it; a
            # deleted one (or one moved out of the root) says nothing about its files, so
            # `flush` asks git.
            if kind == "deleted":
                self.debouncer.add(rel + "/", "unlink", now)
        else:
            if rel.rpartition("/")[2] == GITIGNORE and self.rules_file_changed(rel):
                self.rescan_due = True
            self.debouncer.add(rel, _FILE_KINDS[kind], now)

    def found_directory(self, path: str, now: float) -> None:
        """A directory got its watch after it was created: its files count as created."""
        try:
            with os.scandir(path) as iterator:
                names = [e.name for e in iterator if not e.is_dir(follow_symlinks=False)]
        except OSError:
            return
        for name in names:
            self.record("created", os.path.join(path, name), now)

    def overflowed(self, now: float) -> None:
        """The kernel dropped events: nothing routed per path can be trusted to be complete,
        so the root goes into a storm (one re-validation) and its HEAD is checked."""
        if self._storm_last is None:
            self._storm_last = now
            self._storm_revalidated = now - C.WATCH_STORM_REVALIDATE_S
        self.record_head("", now)

    def record_head(self, prefix: str, now: float) -> None:
        """A ref or HEAD of the repository at `prefix` ('' = the root's own) changed."""
        self._heads_touched.add(prefix)
        self.debouncer.add(HEAD_MARKER, "change", now)

    def rules_file_changed(self, rel: str) -> bool:
        """`rel` is a `.gitignore`: reload it; True when the rules changed."""
        repo = self.repos.owner(rel)
        inner = repo.inner(rel)
        changed = repo.rules.load_dir(inner.rpartition("/")[0])
        if changed:
            repo.refresh_tracked()
        return changed

    def next_due(self) -> float | None:
        due = self.debouncer.next_due()
        if self._storm_last is not None:
            end = self._storm_last + C.WATCH_STORM_QUIET_S
            due = end if due is None else min(due, end)
        return due

    @property
    def pending(self) -> int:
        return len(self.debouncer)

    @property
    def in_storm(self) -> bool:
        return self._storm_last is not None

    # --- flushing --------------------------------------------------------------------------
    def flush(self, now: float) -> Flushed:
        """The changes whose burst is over, HEAD-diff files added, ignored paths dropped."""
        for repo in self.repos.repos.values():
            if repo.rules.refresh_base():  # info/exclude or the global file was edited
                self.rescan_due = True
        released = self.debouncer.pop_due(now)
        changes: dict[str, ChangeKind] = {}
        head_touched = False
        directories: list[str] = []
        for change in released:
            if change.path == HEAD_MARKER:
                head_touched = True
            elif change.path.endswith("/"):
                directories.append(change.path)
            else:
                changes[change.path] = change.kind
        storm = self._storm_last is not None or self._rate(now, len(changes)) > self.storm_paths
        tree_stale = False
        if head_touched:
            moved = self._head_changes()
            tree_stale = moved is not None
            if moved is not None and not storm:
                for rel, kind in moved:
                    changes.setdefault(rel, kind)
                storm = self._rate(now, len(moved)) > self.storm_paths
        if storm:
            return self._storm(now, bool(released), tree_stale)
        for rel_dir in directories:
            for rel in self._vanished_under(rel_dir):
                changes.setdefault(rel, "unlink")
        kept = [
            Change(rel, kind)
            for rel, kind in changes.items()
            if self.filter.in_scope(rel) and not self.repos.ignored(rel)
        ]
        self._shape_changes += sum(1 for c in kept if c.kind != "change") + len(directories)
        if self._shape_changes >= C.WATCH_TREE_STALE_PATHS:
            self._shape_changes = 0
            tree_stale = True
        return Flushed(kept, tree_stale=tree_stale)

    def _rate(self, now: float, count: int) -> int:
        """Paths released within the last WATCH_STORM_WINDOW_S, `count` now included: a storm
        is a rate, since a long checkout settles over many flushes."""
        recent = self._recent
        if count:
            recent.append((now, count))
        while recent and recent[0][0] <= now - C.WATCH_STORM_WINDOW_S:
            recent.popleft()
        return sum(n for _, n in recent)

    def _storm(self, now: float, active: bool, tree_stale: bool) -> Flushed:
        if self._storm_last is None:
            logger.info("%s: change storm; re-validating the window instead of routing", self.root)
            self._storm_revalidated = now
            self._storm_last = now
            return Flushed([], revalidate=True, tree_stale=True)
        if active or self._storm_touched > self._storm_last:
            self._storm_last = now
        elif now - self._storm_last >= C.WATCH_STORM_QUIET_S:
            logger.info("%s: change storm over", self.root)
            self._storm_last = None
            return Flushed([], revalidate=True, tree_stale=True)
        if now - self._storm_revalidated >= C.WATCH_STORM_REVALIDATE_S:
            self._storm_revalidated = now
            return Flushed([], revalidate=True, tree_stale=tree_stale)
        return Flushed([], tree_stale=tree_stale)

    def _head_changes(self) -> list[tuple[str, ChangeKind]] | None:
        """Files that differ between each touched repository's old and new HEAD; None when
        no HEAD moved."""
        touched, self._heads_touched = self._heads_touched or {""}, set()
        moved: list[tuple[str, ChangeKind]] | None = None
        for prefix in sorted(touched):
            repo: Repo | None = self.repos.repos.get(prefix)
            if repo is None:
                continue
            did_move, changes = repo.head.check()
            if did_move:
                moved = moved or []
                moved.extend((repo.outer(c.path), c.kind) for c in changes)
        return moved

    def _vanished_under(self, rel_dir: str) -> list[str]:
        """Tracked files under a deleted directory that are gone from disk, in scope."""
        repo = self.repos.owner(rel_dir.rstrip("/"))
        out = run_git(Path(repo.worktree), ["ls-files", "-z", "--", repo.inner(rel_dir)])
        if out is None or out.returncode != 0:
            return []
        return [
            repo.outer(rel)
            for rel in out.paths()
            if not os.path.lexists(os.path.join(repo.worktree, rel))
        ]
