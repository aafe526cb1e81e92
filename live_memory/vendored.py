"""Vendored and generated directories: dependency installs, virtual environments, caches and
build output.

Left out everywhere a workspace is described or searched (the directory tree, find_paths,
Glob, Grep, the structural index, the OS watcher), whether or not a `.gitignore` names them:
their files are not the repository's own, and one `node_modules` can outnumber the source a
thousand to one. `LIVE_MEMORY_INCLUDE_VENDORED=true` treats them like any other directory; a
tool pointed into one explicitly (`Grep` with `path=node_modules/pkg`, `Read`) still looks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

__all__ = ["VENDORED_DIRS", "in_vendored_dir", "without_vendored"]

VENDORED_DIRS: Final = frozenset(
    {
        "node_modules",
        "bower_components",
        "__pycache__",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        ".eggs",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        "dist",
        "build",
        "target",
        ".next",
        ".nuxt",
        ".svelte-kit",
        ".gradle",
        ".terraform",
    }
)


def in_vendored_dir(rel: str, *, is_dir: bool = False) -> bool:
    """Does workspace-relative POSIX `rel` lie below (or, `is_dir`, name) a vendored directory?

    A file called `build` is not a directory: only directory components count.
    """
    parts = rel.split("/")
    return any(part in VENDORED_DIRS for part in (parts if is_dir else parts[:-1]))


def without_vendored(paths: Sequence[str]) -> list[str]:
    """`paths` (relative POSIX file paths) minus those in vendored directories, order kept.

    One C-level scan of the joined paths usually shows none is, so a 100k-file listing
    costs no per-path split.
    """
    joined = "\n" + "\n".join(paths)
    if not any(f"/{name}/" in joined or f"\n{name}/" in joined for name in VENDORED_DIRS):
        return list(paths)
    return [path for path in paths if not in_vendored_dir(path)]
