"""What a workspace re-checks when the watcher cannot route changes path by path.

Only the files the window holds matter (their knowledge may be stale); the rest of the
repository carries no knowledge to invalidate, so the pass costs what the window holds, not
what the repository does. The events go through the ordinary ingest path, which hashes a
present file and drops the event when its bytes are what the window already has.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Literal, Protocol

__all__ = ["revalidation_events"]


class _Known(Protocol):
    @property
    def state(self) -> str: ...


def revalidation_events(
    root: Path, files: Mapping[str, _Known]
) -> list[tuple[str, Literal["change", "unlink"]]]:
    """(absolute path, kind) for every window file: `change` when it is on disk (ingest
    compares its hash), `unlink` when it is gone; files already known deleted and still
    absent are skipped."""
    events: list[tuple[str, Literal["change", "unlink"]]] = []
    for rel, known in files.items():
        path = os.path.join(root, rel)
        if os.path.lexists(path):
            events.append((path, "change"))
        elif known.state != "deleted":
            events.append((path, "unlink"))
    return events
