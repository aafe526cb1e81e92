"""Map a caller's cwd to its workspace key: the enclosing git root, symlinks resolved.

Pure file-system checks (no `git` subprocess): a `.git` directory or file marks a repository
root, so worktrees and submodules (whose `.git` is a file) count, as with
`git rev-parse --show-toplevel`. A root too broad to serve (`/`, a home directory or a
directory above one) is refused unless LIVE_MEMORY_ALLOWED_ROOTS names it.
"""

from __future__ import annotations

import functools
import logging
import os
import stat
from collections import OrderedDict
from pathlib import Path
from typing import Final

from live_memory.config import constants as C
from live_memory.config.settings import RepoRootMode, Settings
from live_memory.errors import InvalidCwd, RefusedRoot

__all__ = ["ResolvedRoots", "canonical_workspace", "refuse_broad_root"]

logger = logging.getLogger(__name__)

_SYSTEM_HOMES: Final = ("/root",)
_HOME_PARENTS: Final = ("/home", "/Users")
"""Every directory directly inside these is someone's home."""


def canonical_workspace(
    cwd: str,
    settings: Settings | None = None,
    *,
    canonicalize: bool | None = None,
    mode: RepoRootMode | None = None,
) -> Path:
    """Return the workspace root for `cwd`.

    `cwd` must be a non-empty absolute path to an existing directory. With `canonicalize`
    (default: the settings' LIVE_MEMORY_CANONICALIZE_WORKSPACE, else true), the resolved cwd
    is replaced by its enclosing git root: the nearest one (`nearest`, a submodule is its own
    workspace) or the topmost one (`outermost`, folded into the superproject); `mode` defaults
    to the settings' LIVE_MEMORY_REPO_ROOT_MODE. A directory outside any repository is its own
    workspace. Raises InvalidCwd saying what is wrong (empty, NUL byte, relative, missing, not
    a directory), or RefusedRoot for a root too broad to serve (`refuse_broad_root`).
    """
    if canonicalize is None:
        canonicalize = settings.canonicalize_workspace if settings else True
    mode = mode or (settings.repo_root_mode if settings else "nearest")
    if mode not in ("nearest", "outermost"):
        raise ValueError(f"repo root mode must be 'nearest' or 'outermost', got {mode!r}")
    resolved = _resolved_directory(cwd)
    root = resolved
    if canonicalize:
        for directory in (resolved, *resolved.parents):
            if _has_git_marker(directory):
                root = directory
                if mode == "nearest":
                    break
    refuse_broad_root(root, settings)
    return root


def refuse_broad_root(root: Path, settings: Settings | None) -> None:
    """Raise RefusedRoot when `root` (resolved) is the file system root, a home directory
    (the server user's, /root, any /home/* or /Users/*) or above one, unless it is one of
    the settings' LIVE_MEMORY_ALLOWED_ROOTS: every file below it would be the model's to read
    (`/etc/shadow` for a server running as root) and the whole disk indexed."""
    if settings is not None and str(root) in settings.allowed_roots:
        return
    homes = {Path(home) for home in _SYSTEM_HOMES}
    if settings is not None and settings.home_dir is not None:
        homes.add(settings.home_dir)
    parents = _home_parents()
    if root.parent == root:
        reason = "the file system root"
    elif root in homes or root.parent in parents:
        reason = "a home directory"
    elif root in parents or any(home.is_relative_to(root) for home in homes):
        reason = "above a home directory"
    else:
        return
    raise RefusedRoot(
        f"workspace root {root} is {reason}: every file below it would be open to the model. "
        f"Ask from a repository inside it, or add {root} to {C.ENV_PREFIX}ALLOWED_ROOTS to "
        "serve it anyway"
    )


@functools.cache
def _home_parents() -> frozenset[Path]:
    """/home and /Users, as written and resolved (/home is a link on some systems)."""
    return frozenset(p for raw in _HOME_PARENTS for p in (Path(raw), Path(os.path.realpath(raw))))


def _resolved_directory(cwd: str) -> Path:
    if not isinstance(cwd, str) or not cwd.strip():
        raise InvalidCwd("cwd is empty; pass the absolute path of your repository root")
    if "\x00" in cwd:
        raise InvalidCwd(f"cwd contains a NUL byte: {cwd!r}")
    path = Path(cwd)
    if not path.is_absolute():
        raise InvalidCwd(
            f"cwd must be an absolute path, got {cwd!r} (a relative path cannot be resolved "
            "by the server; pass the absolute path of your repository root)"
        )
    try:
        resolved = path.resolve(strict=True)
    except FileNotFoundError as exc:
        raise InvalidCwd(f"cwd does not exist: {cwd}") from exc
    except NotADirectoryError as exc:
        raise InvalidCwd(f"cwd is not a directory: {cwd}") from exc
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop on older Pythons
        raise InvalidCwd(f"cwd cannot be resolved: {cwd} ({exc})") from exc
    if not resolved.is_dir():
        raise InvalidCwd(f"cwd is not a directory: {cwd}")
    return resolved


def _has_git_marker(directory: Path) -> bool:
    try:
        mode = os.stat(directory / ".git").st_mode
    except OSError:  # absent, or an unreadable parent: not a repository we can see
        return False
    return stat.S_ISDIR(mode) or stat.S_ISREG(mode)


class ResolvedRoots:
    """cwd -> canonical root, the most recently used `RESOLVE_CACHE_SIZE` remembered (the
    local gateway actor and the Ray router each keep one; not thread-safe: one owner)."""

    def __init__(self) -> None:
        self.roots: OrderedDict[str, str] = OrderedDict()

    def resolve(self, cwd: str, settings: Settings) -> str:
        """Raises InvalidCwd or RefusedRoot (see canonical_workspace)."""
        root = self.roots.get(cwd)
        if root is not None:
            self.roots.move_to_end(cwd)
            return root
        root = str(canonical_workspace(cwd, settings))
        self.roots[cwd] = root
        if len(self.roots) > C.RESOLVE_CACHE_SIZE:
            self.roots.popitem(last=False)
        return root

    def forget_root(self, root: str) -> None:
        for cwd in [c for c, r in self.roots.items() if r == root]:
            del self.roots[cwd]

    def clear(self) -> None:
        self.roots.clear()
