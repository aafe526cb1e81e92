"""Which git directory serves a work tree, and whether it is that work tree's own.

git looks for its directory from the current one upwards: the first `.git` found, a
directory, a symlink to one or a file `gitdir: <path>`, names it, and that may lead
anywhere. A workspace is untrusted input, so its `.git` could name another repository's
directory (git would show that repository's history) or link to a directory inside the
workspace under another name (which the jail's `.git` rule would not hide). From the files
git itself reads, this module says

- which directories inside a workspace are git's (`git_dirs_inside`, for the jail);
- whether the directories git reported belong to the work tree (`foreign_reason`, for
  `safe_git`): inside the workspace, the work tree's own `.git` directory, or outside but
  linking back to it, as a linked worktree's (`<common>/worktrees/<id>`, whose `gitdir`
  file names this `.git`) and a submodule's (`core.worktree` naming the work tree) do.
"""

from __future__ import annotations

import functools
import logging
import os
import stat
from dataclasses import dataclass

from live_memory.regular_file import read_regular

__all__ = ["GitLocation", "foreign_reason", "git_dirs_inside", "read_gitdir_file"]

logger = logging.getLogger(__name__)

_DOT_GIT = ".git"
_FILE_MAX_BYTES = 4096  # a `gitdir:` or `commondir` file is one path
_MAX_LEVELS = 256  # directories walked up from a workspace looking for its `.git`


@dataclass(frozen=True, slots=True)
class GitLocation:
    """Where git said a work tree's metadata is (real, absolute paths)."""

    git_dir: str
    common_dir: str
    """Refs and objects: the main repository's git directory for a linked worktree."""
    work_tree: str


def read_gitdir_file(path: str) -> str | None:
    """The real path a `.git` file (`gitdir: <path>`, relative to its directory) names, or
    None when `path` is not such a file. Never follows a link at `path` itself."""
    text = _read_small(path)
    if text is None or not text.startswith("gitdir:"):
        return None
    return _named(path, text[len("gitdir:") :].strip())


def git_dirs_inside(real_root: str) -> tuple[str, ...]:
    """The root-relative git and common directories git would use for `real_root` that lie
    inside it, whatever they are called (a `.git` symlink or file pointing into the root, a
    `--separate-git-dir` placed there); usually none besides `.git` itself."""
    found = _first_dot_git(real_root)
    return _dirs_inside(real_root, *found) if found else ()


def foreign_reason(real_root: str, found: GitLocation, core_worktree: str | None) -> str | None:
    """None when the git directory git found for `real_root` is its work tree's own; else
    why not, for the message. `core_worktree` is the configured `core.worktree`, if any."""
    git_dir, common = found.git_dir, found.common_dir
    dot_git = os.path.join(found.work_tree, _DOT_GIT)
    owned = (
        _within(git_dir, real_root)
        or (_is_real_dir(dot_git) and os.path.realpath(dot_git) == git_dir)
        or _named(os.path.join(git_dir, "gitdir")) == os.path.realpath(dot_git)
        or (
            core_worktree is not None
            and os.path.realpath(os.path.join(git_dir, core_worktree)) == found.work_tree
        )
    )
    if not owned:
        return (
            f"{dot_git} names the git directory {git_dir}, which does not link back to this "
            "work tree (it is not a worktree or submodule of it)"
        )
    worktree_of_common = os.path.dirname(git_dir) == os.path.join(common, "worktrees")
    if common != git_dir and not _within(common, real_root) and not worktree_of_common:
        return f"the git directory {git_dir} takes its history from {common}, another repository"
    return None


def _first_dot_git(real_root: str) -> tuple[str, tuple[int, int, int, int]] | None:
    directory = real_root
    for _ in range(_MAX_LEVELS):
        dot_git = os.path.join(directory, _DOT_GIT)
        try:
            info = os.lstat(dot_git)
        except (FileNotFoundError, NotADirectoryError):
            pass
        except OSError:
            return None
        else:
            return dot_git, (info.st_mode, info.st_ino, info.st_mtime_ns, info.st_size)
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent
    return None


@functools.lru_cache(maxsize=64)
def _dirs_inside(real_root: str, dot_git: str, stamp: tuple[int, int, int, int]) -> tuple[str, ...]:
    # The stamp (mode, inode, mtime, size of the `.git` entry) keys the cache: a rewritten
    # `.git` file or a replaced link is looked at afresh.
    mode = stamp[0]
    if stat.S_ISDIR(mode):
        git_dir: str | None = dot_git
    elif stat.S_ISLNK(mode):
        git_dir = os.path.realpath(dot_git)
    else:
        git_dir = read_gitdir_file(dot_git) if stat.S_ISREG(mode) else None
    if git_dir is None or not os.path.isdir(git_dir):
        return ()
    dirs = [git_dir, _named(os.path.join(git_dir, "commondir")) or git_dir]
    prefix = real_root.rstrip("/") + "/"
    return tuple(dict.fromkeys(d[len(prefix) :] for d in dirs if d.startswith(prefix)))


def _named(path: str, text: str | None = None) -> str | None:
    """The real path a file holding one path names (relative to the file's directory)."""
    text = _read_small(path) if text is None else text
    return os.path.realpath(os.path.join(os.path.dirname(path), text)) if text else None


def _read_small(path: str) -> str | None:
    try:  # never blocks on a FIFO, never follows a link at `path`
        data = read_regular(path, _FILE_MAX_BYTES, follow_symlinks=False)
    except OSError:
        return None
    return data.decode("utf-8", errors="replace").strip()


def _is_real_dir(path: str) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _within(path: str, real_root: str) -> bool:
    return path == real_root or path.startswith(real_root.rstrip("/") + "/")
