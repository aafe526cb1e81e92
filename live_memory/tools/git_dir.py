"""What is git's own inside a workspace: never shown to the model.

A `.git` at any depth (the repository's, a nested repository's, a submodule's file and the
`.git/modules` it points into), and the git and common directories git would use for the
root when they lie inside it under another name (a `.git` file or symlink pointing there, a
`--separate-git-dir` placed in the work tree; see `live_memory.git_location`). Its `config`
may hold credentials (`http.extraheader`, as CI checkouts write).
"""

from __future__ import annotations

from live_memory.git_location import git_dirs_inside

__all__ = ["git_internal", "pointed_git_dirs"]

_GIT = ".git"


def git_internal(real_root: str, rel: str, git_dirs: tuple[str, ...] | None = None) -> bool:
    """Is the workspace-relative `rel` inside a git directory: a `.git` at any depth (nested
    repositories and submodules too), or the git directory git uses for the root?

    `git_dirs` (from `pointed_git_dirs`) saves a look at the root's `.git` per path.
    """
    if ".git" in rel and (
        rel == _GIT or rel.startswith(".git/") or "/.git/" in rel or rel.endswith("/.git")
    ):
        return True
    for elsewhere in pointed_git_dirs(real_root) if git_dirs is None else git_dirs:
        if rel == elsewhere or rel.startswith(elsewhere + "/"):
            return True
    return False


def pointed_git_dirs(real_root: str) -> tuple[str, ...]:
    """The root-relative directories git uses for the root that lie inside it under a name
    other than `.git`; usually none."""
    return tuple(d for d in git_dirs_inside(real_root) if d != _GIT)
