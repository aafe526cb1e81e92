"""Where a work tree's git metadata lives, read from the files git writes (no git process).

A plain repository keeps it in `<root>/.git/`. A linked worktree or a submodule has a `.git`
*file* (`gitdir: <path>`) pointing elsewhere; a worktree's gitdir also names, in `commondir`,
the repository that holds the refs and `info/exclude` shared by all its worktrees. HEAD-move
detection has to watch those directories, which are outside the work tree.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

from live_memory.git_location import read_gitdir_file
from live_memory.regular_file import read_regular

__all__ = ["GitDirs", "find_git_dirs"]

logger = logging.getLogger(__name__)

_GITDIR_FILE_MAX_BYTES = 4096


@dataclass(frozen=True, slots=True)
class GitDirs:
    """The metadata directories of one work tree (absolute, normalised)."""

    gitdir: str
    """Holds this work tree's HEAD (and its index)."""
    commondir: str
    """Holds refs, packed-refs and info/exclude (the gitdir itself for a plain repository)."""

    @property
    def head_dirs(self) -> tuple[str, ...]:
        """Directories whose entries change when HEAD or a branch moves."""
        dirs = [self.gitdir, self.commondir, os.path.join(self.commondir, "refs", "heads")]
        return tuple(dict.fromkeys(d for d in dirs if os.path.isdir(d)))

    @property
    def info_exclude(self) -> str:
        return os.path.join(self.commondir, "info", "exclude")


def _read_small(path: str) -> str | None:
    try:
        return read_regular(path, _GITDIR_FILE_MAX_BYTES).decode("utf-8", "replace").strip()
    except OSError:
        return None


def find_git_dirs(worktree: str) -> GitDirs | None:
    """The git metadata of the work tree at `worktree`, or None when it has no `.git`."""
    dot_git = os.path.join(worktree, ".git")
    if os.path.isdir(dot_git):
        gitdir = dot_git
    elif os.path.isfile(dot_git):
        named = read_gitdir_file(dot_git)
        if named is None or not os.path.isdir(named):
            logger.debug("%s names no git directory", dot_git)
            return None
        gitdir = named
    else:
        return None
    common = _read_small(os.path.join(gitdir, "commondir"))
    commondir = os.path.normpath(os.path.join(gitdir, common)) if common else gitdir
    return GitDirs(gitdir=gitdir, commondir=commondir)
