"""Map a caller's cwd to its workspace key: the enclosing git root, symlinks resolved.

Pure file-system checks (no `git` subprocess): a `.git` directory or file marks a repository
root, so worktrees and submodules (whose `.git` is a file) count, as with
`git rev-parse --show-toplevel`.
"""

from __future__ import annotations

import logging
import os
import stat
from collections import OrderedDict
from pathlib import Path

from live_memory.config import constants as C
from live_memory.config.settings import RepoRootMode, Settings
from live_memory.errors import InvalidCwd

__all__ = ["ResolvedRoots", "canonical_workspace"]

logger = logging.getLogger(__name__)


def canonical_workspace(
    cwd: str, *, canonicalize: bool = True, mode: RepoRootMode = "nearest"
) -> Path:
    """Return the workspace root for `cwd`.

    `cwd` must be a non-empty absolute path to an existing directory. With `canonicalize`, the
    resolved cwd is replaced by its enclosing git root: the nearest one (`nearest`, a submodule
    is its own workspace) or the topmost one (`outermost`, folded into the superproject). A
    directory outside any repository is its own workspace. Raises InvalidCwd saying what is
    wrong (empty, NUL byte, relative, missing, not a directory).
    """
    if mode not in ("nearest", "outermost"):
        raise ValueError(f"repo root mode must be 'nearest' or 'outermost', got {mode!r}")
    resolved = _resolved_directory(cwd)
    if not canonicalize:
        return resolved
    found: Path | None = None
    for directory in (resolved, *resolved.parents):
        if _has_git_marker(directory):
            if mode == "nearest":
                return directory
            found = directory
    return found or resolved


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
        """Raises InvalidCwd (see canonical_workspace)."""
        root = self.roots.get(cwd)
        if root is not None:
            self.roots.move_to_end(cwd)
            return root
        root = str(
            canonical_workspace(
                cwd, canonicalize=settings.canonicalize_workspace, mode=settings.repo_root_mode
            )
        )
        self.roots[cwd] = root
        if len(self.roots) > C.RESOLVE_CACHE_SIZE:
            self.roots.popitem(last=False)
        return root

    def forget_root(self, root: str) -> None:
        for cwd in [c for c, r in self.roots.items() if r == root]:
            del self.roots[cwd]

    def clear(self) -> None:
        self.roots.clear()
