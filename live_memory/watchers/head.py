"""HEAD-move detection: a branch switch, pull or commit invalidates every file it touched.

The working-tree writes of a checkout reach the watcher as ordinary events too; the diff
between the two commits is the complete list even when some of those events were lost
(inotify queue overflow, a polling interval that missed a quick rewrite).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from live_memory.watchers.debounce import Change
from live_memory.watchers.git_process import run_git

__all__ = ["HeadTracker"]

logger = logging.getLogger(__name__)


class HeadTracker:
    """Remembers the commit HEAD resolves to and reports what changed when it moves."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.commit = self._resolve()

    def _resolve(self) -> str | None:
        out = run_git(self.root, ["rev-parse", "-q", "--verify", "HEAD^{commit}"])
        if out is None or out.returncode != 0:
            return None  # not a repository, or an unborn branch
        return out.stdout.decode("ascii", "replace").strip() or None

    def moved(self) -> list[Change]:
        """Changes between the remembered commit and HEAD now (then remembered instead).

        A file present on disk is a `change`, one that is gone an `unlink`. Nothing is
        reported when HEAD did not move, or when there was no earlier commit to compare with
        (the watcher already saw those files being written).
        """
        return self.check()[1]

    def check(self) -> tuple[bool, list[Change]]:
        """(did HEAD move, the changes `moved` describes)."""
        old, new = self.commit, self._resolve()
        if new is None or new == old:
            return False, []
        self.commit = new
        if old is None:
            return True, []
        out = run_git(self.root, ["diff-tree", "-r", "-z", "--name-only", "--no-renames", old, new])
        if out is None or out.returncode != 0:
            logger.warning(
                "%s: cannot diff %s..%s; changed files not invalidated", self.root, old, new
            )
            return True, []
        logger.info("%s: HEAD moved %s → %s", self.root, old[:12], new[:12])
        return True, [
            Change(rel, "change" if os.path.lexists(self.root / rel) else "unlink")
            for rel in out.paths()
            if not os.path.isdir(self.root / rel)  # a submodule's gitlink: its own HEAD says
        ]
