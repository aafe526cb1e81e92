"""What is git's own inside a workspace: never shown to the model.

A `.git` at any depth (the repository's, a nested repository's, a submodule's file and the
`.git/modules` it points into), and the git directory a root `.git` *file* names when it
lies inside the root (`git init --separate-git-dir` placed in the work tree). Its `config`
may hold credentials (`http.extraheader`, as CI checkouts write).
"""

from __future__ import annotations

import functools
import os
import stat

from live_memory.tools.beneath import open_beneath

__all__ = ["git_internal", "pointed_git_dirs"]

_GIT = ".git"
_GITDIR_FILE_MAX_BYTES = 4096


def git_internal(real_root: str, rel: str, git_dirs: tuple[str, ...] | None = None) -> bool:
    """Is the workspace-relative `rel` inside a git directory: a `.git` at any depth (nested
    repositories and submodules too), or the git directory the root's `.git` file names?

    `git_dirs` (from `pointed_git_dirs`) saves a stat per path when checking many.
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
    """The git directory the root's `.git` file points to, when it lies inside the root
    (a `--separate-git-dir` placed in the work tree); usually none."""
    found = _pointed_git_dir(real_root, _stamp(os.path.join(real_root, _GIT)))
    return (found,) if found else ()


def _stamp(path: str) -> tuple[int, int, int] | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return (info.st_ino, info.st_mtime_ns, info.st_size) if stat.S_ISREG(info.st_mode) else None


@functools.lru_cache(maxsize=64)
def _pointed_git_dir(real_root: str, stamp: tuple[int, int, int] | None) -> str | None:
    """The root-relative git directory a `.git` file (`gitdir: ...`) names, when inside."""
    if stamp is None:
        return None
    try:
        opened = open_beneath(real_root, _GIT)
    except OSError:
        return None
    try:
        data = os.read(opened.fd, _GITDIR_FILE_MAX_BYTES)
    except OSError:
        return None
    finally:
        os.close(opened.fd)
    text = data.decode("utf-8", errors="replace").strip()
    if not text.startswith("gitdir:"):
        return None
    target = os.path.realpath(os.path.join(real_root, text[len("gitdir:") :].strip()))
    prefix = real_root.rstrip("/") + "/"
    return target[len(prefix) :] if target.startswith(prefix) else None
