"""Preload globs: configured reference documents read verbatim on every workspace load."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from live_memory.config import constants as C
from live_memory.errors import LiveMemoryError
from live_memory.memory.window import Window
from live_memory.path_glob import compile_glob
from live_memory.tools import list_workspace_files, read_workspace_text

__all__ = ["preload"]

logger = logging.getLogger(__name__)


def _expand(root: Path, patterns: Sequence[str], vendored: bool) -> list[str]:
    """Matches in deterministic order: earlier patterns first, sorted within a pattern.

    Patterns are anchored at the root (`README.md` is the root's) and matched against the
    workspace listing (the tools' file set), so ignored
    trees such as `node_modules` are never entered, and matching is linear in time.
    """
    globs = []
    for pattern in patterns:
        if not pattern or pattern.startswith("/") or "\0" in pattern:
            logger.warning("preload glob %r ignored: it must be workspace-relative", pattern)
            continue
        try:
            globs.append(compile_glob(pattern, anchored=True))  # relative to the root
        except ValueError as exc:
            logger.warning("preload glob %r ignored: %s", pattern, exc)
    if not globs:
        return []
    files = list_workspace_files(root, vendored=vendored)  # sorted
    seen: dict[str, None] = {}
    for glob in globs:
        for rel in files:
            if glob.matches(rel):
                seen.setdefault(rel)
    return list(seen)


def preload(
    window: Window,
    root: Path,
    patterns: Sequence[str],
    *,
    total_cap_bytes: int,
    secret_patterns: Sequence[str] = C.DEFAULT_SECRET_PATH_PATTERNS,
    max_file_bytes: int = C.PASSIVE_MAX_FILE_BYTES,
    held_cap: int | None = None,
    vendored: bool = False,
) -> int:
    """Read the preload matches into `window` as preloaded content; returns files loaded.

    `total_cap_bytes` should already be clamped below the floor budget: preloading past it
    would make the first question distil away the very documents the user asked for.
    """
    loaded, used = 0, 0
    for rel in _expand(root, patterns, vendored):
        try:
            text, read = read_workspace_text(
                root, rel, max_bytes=max_file_bytes, secret_patterns=secret_patterns
            )
        except (LiveMemoryError, OSError) as exc:
            logger.info("preload skipped %s: %s", rel, exc)
            continue
        if used + read.size > total_cap_bytes:
            logger.warning(
                "preload stopped at %s: total cap of %d bytes reached", rel, total_cap_bytes
            )
            break
        window.observe(rel, text, read.sha256, read.size, source="preloaded", held_cap=held_cap)
        used += read.size
        loaded += 1
    return loaded
