"""The second step of a snapshot save: settling its unsettled copy (a mixin of SnapshotStore).

A save is written in two steps, so that an answer waits only for the first. `save(...,
settle=False)` replaces an *unsettled* copy beside the snapshot (`<name>.json.pending`,
renamed into place, not fsynced): once it returns the state survives a crash of the server
(kill -9), which is what an answer waits for. `settle` then fsyncs that copy and renames it
over the snapshot, so the snapshot itself is never a file whose bytes may not have reached
the disk: after a power loss either the settled copy is complete, or the previous snapshot
is (the unsettled one is then incomplete and is set aside). An unsettled copy, when there is
one, is always the newest state: `load` settles it first. `settle_soon` settles on a thread
of its own (snapshot_settler.py), so that not even the workspace's next question waits for
it. The fsync cost 3 ms per answer at the median, over 10 ms at the 90th percentile on a
busy machine, all of it on the answer's path before.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

from live_memory.atomic_file import fsync_directory
from live_memory.config import constants as C
from live_memory.errors import SnapshotError
from live_memory.memory.snapshot_settler import SnapshotSettler
from live_memory.regular_file import open_regular

__all__ = ["Settling", "unsettled_of"]


def unsettled_of(path: Path) -> Path:
    """The unsettled copy beside the snapshot file `path`."""
    return path.with_name(path.name + C.SNAPSHOT_UNSETTLED_SUFFIX)


class Settling:
    """Settling saves of a SnapshotStore (whose fields these are)."""

    write_error: str | None
    _sync: Callable[[int], None]
    _settler: SnapshotSettler

    def path_for(self, root: Path) -> Path:
        raise NotImplementedError

    def _lock(self, path: Path) -> threading.Lock:
        raise NotImplementedError

    def unsettled_path_for(self, root: Path) -> Path:
        """Where a save of `root` waits for `settle` (not a `.json` file: never listed)."""
        return unsettled_of(self.path_for(root))

    def settle(self, root: Path) -> None:
        """Make the last save of `root` durable against a power loss (fsync, then rename it
        over the snapshot); nothing to do when it is settled already. Raises SnapshotError
        when it cannot be: the unsettled copy is kept (`load` still prefers it).

        The fsync runs without the lock, so a save meanwhile (the next answer) does not wait
        for it; the copy is renamed only if it is still the one synced (a newer save's copy
        is left to that save's own settle)."""
        path, unsettled = self.path_for(root), self.unsettled_path_for(root)
        try:
            fd = self._open_synced(unsettled, root)
        except FileNotFoundError:
            return
        try:
            with self._lock(path):
                try:
                    if os.stat(unsettled).st_ino != os.fstat(fd).st_ino:
                        return  # a newer save replaced it; its own settle follows
                except FileNotFoundError:
                    return  # settled meanwhile (by a load)
                self._replace(unsettled, path, root)
        finally:
            os.close(fd)

    def settle_soon(self, root: Path) -> None:
        """`settle(root)` on the settler's thread, soon; a failure is logged and reported
        as `write_error`."""
        self._settler.submit(root)

    def wait_settled(self, timeout_s: float) -> bool:
        """Block until every `settle_soon` so far has run (shutdown); False on timeout."""
        return self._settler.wait_idle(timeout_s)

    def _settle_locked(self, path: Path, unsettled: Path, root: Path) -> None:
        """fsync `unsettled` and rename it over `path`, the lock held (a full save, a load)."""
        try:
            os.close(self._open_synced(unsettled, root))
        except FileNotFoundError as exc:
            raise self._settle_failed(root, exc) from exc
        self._replace(unsettled, path, root)

    def _open_synced(self, unsettled: Path, root: Path) -> int:
        """`unsettled` opened and fsynced: its descriptor, for the caller to close. Raises
        FileNotFoundError when there is none, SnapshotError when it cannot be synced."""
        try:
            fd = open_regular(unsettled, follow_symlinks=False)
        except FileNotFoundError:
            raise
        except OSError as exc:
            raise self._settle_failed(root, exc) from exc
        try:
            self._sync(fd)
        except OSError as exc:
            os.close(fd)
            raise self._settle_failed(root, exc) from exc
        return fd

    def _replace(self, unsettled: Path, path: Path, root: Path) -> None:
        """Rename a synced `unsettled` over `path` (the lock held)."""
        # The directory is fsynced only when the snapshot is created: re-syncing it for every
        # replacement cost ~10 ms per answer here (it forces a journal commit); a replacing
        # rename reaches the disk with the file system's next commit, so a power loss can
        # bring back the previous, complete snapshot (docs/SECURITY.md says so).
        created = not path.exists()
        try:
            os.replace(unsettled, path)
        except OSError as exc:
            raise self._settle_failed(root, exc) from exc
        if created:
            fsync_directory(path.parent, self._sync)

    def _settle_failed(self, root: Path, exc: OSError) -> SnapshotError:
        self.write_error = f"snapshot of {root} could not be settled: {exc}"
        return SnapshotError(self.write_error)
