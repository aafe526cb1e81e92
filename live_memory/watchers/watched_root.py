"""Everything the watcher keeps for one watched root: filter, debouncer, HEAD tracker.

Plain state driven by the watchdog actor: raw events go in through `record`, settled
changes come out of `flush`. Time is passed in; git is the only outside world it touches.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Literal

from live_memory.config import constants as C
from live_memory.watchers.debounce import Change, ChangeKind, Debouncer
from live_memory.watchers.git_process import run_git
from live_memory.watchers.head import HeadTracker
from live_memory.watchers.path_filter import HEAD_MARKER, PathFilter

__all__ = ["RawKind", "WatchedRoot"]

logger = logging.getLogger(__name__)

RawKind = Literal["created", "modified", "deleted", "moved"]

_FILE_KINDS: dict[str, ChangeKind] = {"created": "add", "modified": "change", "deleted": "unlink"}


class WatchedRoot:
    """One root's pending changes; `flush` yields the debounced, filtered result."""

    def __init__(
        self,
        root: str,
        *,
        file_globs: tuple[str, ...] = (),
        quiet_s: float = C.WATCH_DEBOUNCE_S,
        max_delay_s: float = C.WATCH_MAX_DELAY_S,
    ) -> None:
        self.filter = PathFilter(root, file_globs)
        self.root = self.filter.root
        self.debouncer = Debouncer(quiet_s, max_delay_s)
        self.head = HeadTracker(Path(self.root))

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
        rel = self.filter.classify(path, directory=directory)
        if rel is None:
            return
        if rel == HEAD_MARKER:
            self.debouncer.add(HEAD_MARKER, "change", now)
        elif directory:
            # Files inside a created directory arrive as their own events; a deleted one (or
            # one moved out of the root) says nothing about its files, so `flush` asks git.
            if kind == "deleted":
                self.debouncer.add(rel + "/", "unlink", now)
        else:
            self.debouncer.add(rel, _FILE_KINDS[kind], now)

    def next_due(self) -> float | None:
        return self.debouncer.next_due()

    @property
    def pending(self) -> int:
        return len(self.debouncer)

    def flush(self, now: float) -> list[Change]:
        """The changes whose burst is over, HEAD-diff files added, ignored paths dropped."""
        changes: dict[str, ChangeKind] = {}
        head_touched = False
        for change in self.debouncer.pop_due(now):
            if change.path == HEAD_MARKER:
                head_touched = True
            elif change.path.endswith("/"):
                for rel in self._vanished_under(change.path):
                    changes.setdefault(rel, "unlink")
            else:
                changes[change.path] = change.kind
        if head_touched:
            for change in self.head.moved():
                if self.filter.classify(os.path.join(self.root, change.path)) == change.path:
                    changes.setdefault(change.path, change.kind)
        kept = self.filter.unignored(list(changes))
        return [Change(rel, changes[rel]) for rel in kept]

    def _vanished_under(self, rel_dir: str) -> list[str]:
        """Tracked files under a deleted directory that are gone from disk, in scope."""
        out = run_git(Path(self.root), ["ls-files", "-z", "--", rel_dir])
        if out is None or out.returncode != 0:
            return []
        return [
            rel
            for rel in out.paths()
            if self.filter.in_scope(rel) and not os.path.lexists(os.path.join(self.root, rel))
        ]
