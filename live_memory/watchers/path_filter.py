"""Which watched paths matter: workspace files in scope, not `.git` internals, not vendored.

Inside `.git` only the files whose change can mean "HEAD moved" (HEAD itself, refs, packed
refs) are kept, and all of them collapse onto one key, `HEAD_MARKER`, so a burst of ref
updates triggers a single HEAD check.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence

from live_memory.path_glob import glob_set
from live_memory.vendored import in_vendored_dir

__all__ = ["HEAD_MARKER", "PathFilter"]

logger = logging.getLogger(__name__)

HEAD_MARKER = ".git/HEAD"
"""The debounce key for "a ref or HEAD changed"; never emitted as a file event."""

_REF_FILES = frozenset({"HEAD", "HEAD.lock", "packed-refs", "packed-refs.lock"})


def _is_ref_movement(inside_git: list[str]) -> bool:
    return bool(inside_git) and (
        (len(inside_git) == 1 and inside_git[0] in _REF_FILES)
        or inside_git[0] == "refs"
        or inside_git == ["logs", "HEAD"]  # the reflog: every commit, reset and checkout
    )


class PathFilter:
    """Maps absolute event paths to workspace-relative ones and drops those that do not matter."""

    def __init__(
        self, root: str, file_globs: Sequence[str] = (), *, vendored: bool = False
    ) -> None:
        self.root = os.path.normpath(root)
        self._prefix = self.root.rstrip("/") + "/"
        self.file_globs = tuple(file_globs)
        self.vendored = vendored
        """Watch vendored directories too (`live_memory.vendored`)."""

    def relative(self, path: str) -> str | None:
        """The workspace-relative POSIX path, or None outside the root (or the root itself)."""
        if not path.startswith(self._prefix) or "\0" in path:
            return None
        parts = [p for p in path[len(self._prefix) :].split("/") if p not in ("", ".")]
        if not parts or ".." in parts:
            return None
        return "/".join(parts)

    def in_scope(self, rel: str) -> bool:
        """Does `rel` match a file glob (see `live_memory.path_glob`)? None = everything.
        A file in a vendored directory never does (unless those are included)."""
        if not self.vendored and in_vendored_dir(rel):
            return False
        return not self.file_globs or glob_set(self.file_globs).matches(rel)

    def skipped_dir(self, rel: str) -> bool:
        """Is directory `rel` one the watcher leaves alone for its name (vendored)?"""
        return not self.vendored and in_vendored_dir(rel, is_dir=True)

    def classify(self, path: str, *, directory: bool = False) -> str | None:
        """The relative path to debounce, `HEAD_MARKER` for a ref movement, or None to drop.

        Directories are not scope-checked here: what matters is the files they held.
        """
        rel = self.relative(path)
        if rel is None:
            return None
        parts = rel.split("/")
        if ".git" in parts:
            top_level_git = parts[0] == ".git" and ".git" not in parts[1:]
            if top_level_git and not directory and _is_ref_movement(parts[1:]):
                return HEAD_MARKER
            return None
        if not directory and not self.in_scope(rel):
            return None
        return rel
