"""Folding the server's own re-read of a held file into a window (no model involved).

When a file whose content the window holds changes on disk, the shell reads it again (jailed,
capped, redacted) and reports a `Reread`; `apply_reread` turns that into the window's ordinary
changes: new text is observed (so the next observation delta carries it, append-only, and
facts citing the file are demoted), an unreadable or over-cap file becomes "stale", a missing
one "deleted", and bytes equal to what is held change nothing (the echo of a teed write).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from live_memory.memory.model import FileSource
from live_memory.memory.window import Window

__all__ = ["Reread", "RereadOutcome", "apply_reread"]

RereadOutcome = Literal["content", "unreadable", "missing"]


@dataclass(frozen=True, slots=True)
class Reread:
    """What the shell found re-reading one workspace-relative `path` for request `ticket`."""

    path: str
    ticket: int
    outcome: RereadOutcome
    content: str | None = None
    """The text as the model may see it (secrets redacted); only for "content"."""
    sha256: str | None = None
    """Of the raw bytes on disk (what a teed read of the same bytes hashes to)."""
    size: int = 0
    reason: str = ""
    """Why it could not be held ("binary", "too_large", ...), for logs and tests."""


def apply_reread(window: Window, result: Reread, held_cap: int | None) -> bool:
    """Apply one re-read to `window`; True when the window changed."""
    ctx = window.files.get(result.path)
    if ctx is None:  # evicted (or wiped) while the read ran: nothing to correct
        return False
    if result.outcome == "missing":
        return window.mark_deleted(result.path)
    same = result.sha256 is not None and result.sha256 == ctx.sha256 and ctx.state == "current"
    if same:
        return False
    if result.outcome == "unreadable" or result.content is None or result.sha256 is None:
        return window.mark_stale(result.path)
    if ctx.content is None and ctx.state == "current":
        # Shed meanwhile (the held-bytes cap chose other files): do not hold it again,
        # only say it moved on.
        return window.mark_stale(result.path)
    source: FileSource = "preloaded" if ctx.source == "preloaded" else "observed"
    window.observe(
        result.path, result.content, result.sha256, result.size, source=source, held_cap=held_cap
    )
    window.demote(result.path)  # facts citing the old bytes are as outdated as they are
    return True
