"""The snapshot store interface: what workspace actors, the gateway and the Ray backend's
hosts need of wherever snapshots live.

`SnapshotStore` (snapshot_store.py) is the filesystem implementation: one JSON file per
workspace under a directory, which on a cluster is a shared path (LIVE_MEMORY_DATA_DIR on
shared storage) so that a workspace actor restarted on any node restores the same state.
Another implementation (an object store, a database) provides these methods.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

__all__ = ["Snapshots"]


class Snapshots(Protocol):
    write_error: str | None
    """Why the last write failed; None once a write succeeds (/health)."""

    def path_for(self, root: Path) -> Path:
        """Where `root`'s snapshot lives (the dashboard reads its modification time)."""
        ...

    def save(self, root: Path, payload: Mapping[str, object], *, settle: bool = True) -> None:
        """Replace `root`'s state atomically, durable against a crash of the server on
        return (an answer waits for this) and, unless `settle` is False, against a power
        loss; raises SnapshotError when it cannot."""
        ...

    def settle(self, root: Path) -> None:
        """Make the last save of `root` durable against a power loss too (run after the
        answers it carried went out); raises SnapshotError when it cannot."""
        ...

    def settle_soon(self, root: Path) -> None:
        """`settle(root)` in the background (a workspace's next message never waits for
        it); a failure is logged and reported as `write_error`."""
        ...

    def wait_settled(self, timeout_s: float) -> bool:
        """Block until every `settle_soon` so far has run (shutdown); False on timeout."""
        ...

    def load(self, root: Path) -> dict[str, object] | None:
        """`root`'s state, or None (never saved, or set aside as untrustworthy)."""
        ...

    def quarantine(self, root: Path, detail: str) -> None:
        """Set `root`'s snapshot aside (it could not be restored), never delete it."""
        ...

    def delete(self, root: Path) -> None: ...

    def exists(self, root: Path) -> bool: ...

    def page_of_roots(self, offset: int, limit: int) -> tuple[list[tuple[Path, float]], int]:
        """A page of the stored workspaces, newest first: (root, saved at), and the total."""
        ...
