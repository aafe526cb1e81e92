"""Preload globs: configured reference documents read verbatim on every workspace load."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from live_memory.config import constants as C
from live_memory.errors import LiveMemoryError
from live_memory.memory.window import Window
from live_memory.tools import read_workspace_text, resolve_in_root

__all__ = ["preload"]

logger = logging.getLogger(__name__)


def _expand(root: Path, patterns: Sequence[str]) -> list[str]:
    """Matches in deterministic order: earlier patterns first, sorted within a pattern."""
    seen: dict[str, None] = {}
    for pattern in patterns:
        if not pattern or pattern.startswith("/") or "\0" in pattern:
            logger.warning("preload glob %r ignored: it must be workspace-relative", pattern)
            continue
        for match in sorted(root.glob(pattern)):
            rel = match.relative_to(root).as_posix() if match.is_relative_to(root) else None
            if rel and not rel.startswith(".git/") and match.is_file():
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
) -> int:
    """Read the preload matches into `window` as preloaded content; returns files loaded.

    `total_cap_bytes` should already be clamped below the floor budget: preloading past it
    would make the first question distil away the very documents the user asked for.
    """
    loaded, used = 0, 0
    for rel in _expand(root, patterns):
        try:
            resolve_in_root(root, rel)
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
        window.observe(rel, text, read.sha256, read.size, source="preloaded")
        used += read.size
        loaded += 1
    return loaded
