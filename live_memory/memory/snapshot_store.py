"""One JSON snapshot file per workspace root, written atomically, quarantined when unreadable.

A snapshot is `{"format_version", "root", "saved_at", "state"}` written with orjson, in that
key order, so `page_of_roots` reads a root from the head of a file without parsing its state.
A file that cannot be trusted (corrupt, another root, unknown format, over SNAPSHOT_MAX_BYTES:
no more is read of it) is moved aside into `quarantine/` rather than deleted, so nothing a
user had is lost silently.

A save is written in two steps, so that an answer waits only for the first: see
snapshot_settling.py.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import logging
import os
import re
import threading
import weakref
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

import orjson

from live_memory.atomic_file import write_atomically
from live_memory.config import constants as C
from live_memory.errors import SnapshotError
from live_memory.memory.snapshot_settler import SnapshotSettler
from live_memory.memory.snapshot_settling import Settling, unsettled_of
from live_memory.regular_file import read_regular

__all__ = ["SnapshotStore"]

logger = logging.getLogger(__name__)

_SLUG_MAX: Final = 40
_DIGEST_CHARS: Final = 16
_HEAD = re.compile(rb'^\{"format_version":(\d+),"root":("(?:[^"\\]|\\.)*")')


class SnapshotStore(Settling):
    """Snapshots of workspace state under one directory. Safe to use from many threads."""

    def __init__(
        self,
        directory: Path,
        *,
        write: Callable[..., None] = write_atomically,
        sync: Callable[[int], None] = os.fsync,
    ) -> None:
        """`write(path, data, sync=False)` replaces a file atomically (a test may pass one
        that fails the way a full disk does); `sync(fd)` makes a file's or a directory's
        content durable (os.fsync)."""
        self.directory = directory
        self._write_file = write
        self._sync = sync
        self.write_error: str | None = None
        """Why the last snapshot write failed; None once a write succeeds (/health)."""
        self._guard = threading.Lock()
        # Weak: a workspace's lock lives while someone holds or waits on it, not forever.
        self._locks: weakref.WeakValueDictionary[Path, threading.Lock] = (
            weakref.WeakValueDictionary()
        )
        self._settler = SnapshotSettler(self.settle)

    def path_for(self, root: Path) -> Path:
        """The snapshot file of `root`: a readable slug plus a hash of the full path."""
        slug = re.sub(r"[^A-Za-z0-9._-]+", "-", root.name).strip("-.")[:_SLUG_MAX] or "root"
        digest = hashlib.sha256(os.fsencode(root)).hexdigest()[:_DIGEST_CHARS]
        return self.directory / f"{slug}-{digest}{C.SNAPSHOT_SUFFIX}"

    def save(self, root: Path, payload: Mapping[str, object], *, settle: bool = True) -> None:
        """Atomically replace the state of `root` with `payload`, durable against a crash
        of this process on return, and against a power loss too unless `settle` is False:
        then once `settle(root)` has run.

        Raises SnapshotError when the payload cannot be serialised or the write fails (disk
        full, ...); the previous state is then left as it was.
        """
        document = {
            "format_version": C.SNAPSHOT_FORMAT_VERSION,
            "root": str(root),
            "saved_at": datetime.now(UTC).isoformat(),
            "state": dict(payload),
        }
        try:
            data = orjson.dumps(document)
        except TypeError as exc:  # orjson.JSONEncodeError is a TypeError
            raise SnapshotError(f"snapshot of {root} cannot be serialised: {exc}") from exc
        path = self.path_for(root)
        with self._lock(path):
            unsettled = self.unsettled_path_for(root)
            self._write(unsettled, data, root)
            if settle:
                self._settle_locked(path, unsettled, root)

    def load(self, root: Path) -> dict[str, object] | None:
        """The state last saved for `root`, or None when there is none or it was unusable.

        An unusable file is moved to `quarantine/` and logged. Raises SnapshotError only when
        the file exists but cannot be read at all (permissions, I/O error).
        """
        path = self.path_for(root)
        with self._lock(path):
            newest = self._settle_unsettled(path, root)
            if newest is not None:
                return newest
            data = _read(path)
            if data is None:
                return None
            state = _state_of(data, root)
            if isinstance(state, tuple):
                self._quarantine(path, *state)
                return None
            return state

    def _settle_unsettled(self, path: Path, root: Path) -> dict[str, object] | None:
        """Before a load: the unsettled copy of a save, if one is left (the server stopped
        before settling it), is the newest state: a usable one is settled and its state
        returned. One a power loss left incomplete is set aside (None: the previous
        snapshot is what loads)."""
        unsettled = unsettled_of(path)
        data = _read(unsettled)
        if data is None:
            return None
        state = _state_of(data, root)
        if isinstance(state, tuple):
            self._quarantine(unsettled, "unsettled", state[1])
            return None
        try:
            self._settle_locked(path, unsettled, root)
        except SnapshotError as exc:  # still the newest state: it loads, unsettled
            logger.warning("%s", exc)
        return state

    def quarantine(self, root: Path, detail: str) -> None:
        """Move a snapshot whose content turned out malformed aside (logged)."""
        path = self.path_for(root)
        if path.exists():
            self._quarantine(path, "malformed", detail)

    def delete(self, root: Path) -> None:
        """Remove the snapshot of `root` if there is one. Raises SnapshotError on I/O errors."""
        path = self.path_for(root)
        with self._lock(path):
            try:
                self.unsettled_path_for(root).unlink(missing_ok=True)
                path.unlink(missing_ok=True)
            except OSError as exc:
                raise SnapshotError(f"snapshot {path} cannot be deleted: {exc}") from exc

    def exists(self, root: Path) -> bool:
        """Whether a snapshot file exists for `root` (it may still prove unusable on load)."""
        return self.path_for(root).is_file() or self.unsettled_path_for(root).is_file()

    def page_of_roots(self, offset: int, limit: int) -> tuple[list[tuple[Path, float]], int]:
        """Stored workspaces, most recently saved first: (root, saved at) for at most `limit`
        of them from `offset`, and how many snapshot files there are in all.

        Bounded by the page: the directory is listed (names and mtimes), but only the page's
        files are opened, and only their first SNAPSHOT_HEAD_BYTES are read. Files that are
        not snapshots of ours (unreadable, another format) are skipped.
        """
        found: list[tuple[float, str]] = []
        try:
            with os.scandir(self.directory) as entries:
                for entry in entries:
                    if entry.name.endswith(C.SNAPSHOT_SUFFIX) and not entry.name.startswith("."):
                        with contextlib.suppress(OSError):  # removed meanwhile
                            found.append((entry.stat(follow_symlinks=False).st_mtime, entry.path))
        except OSError:  # no directory yet
            return [], 0
        found.sort(reverse=True)
        page: list[tuple[Path, float]] = []
        for mtime, path in found[max(offset, 0) : max(offset, 0) + max(limit, 0)]:
            root = _read_root(Path(path))
            if root is not None and self.path_for(root) == Path(path):
                page.append((root, mtime))
        return page, len(found)

    def _lock(self, path: Path) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(path, threading.Lock())

    def _write(self, path: Path, data: bytes, root: Path) -> None:
        # Renamed into place once written, so a server crash (kill -9) never loses a
        # written state nor leaves a partial one; fsynced by `settle`.
        try:
            self._write_file(path, data, sync=False)
        except OSError as exc:
            self.write_error = f"snapshot of {root} could not be written: {exc}"
            raise SnapshotError(self.write_error) from exc
        self.write_error = None

    def _quarantine(self, path: Path, reason: str, detail: str) -> None:
        quarantine = self.directory / C.QUARANTINE_DIR_NAME
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        target = quarantine / f"{path.stem}.{stamp}.{reason}{path.suffix}"
        try:
            quarantine.mkdir(parents=True, exist_ok=True)
            os.replace(path, target)
        except OSError as exc:
            logger.warning(
                "snapshot %s is unusable (%s) and could not be quarantined: %s", path, detail, exc
            )
            return
        logger.warning("snapshot %s is unusable (%s); moved to %s", path, detail, target)


def _read(path: Path) -> bytes | tuple[str, str] | None:
    """The file's bytes, at most one past SNAPSHOT_MAX_BYTES (`_state_of` refuses those);
    None when there is none; (reason tag, explanation) when it is not a regular file (a FIFO
    would block the load); SnapshotError when it cannot be read."""
    try:
        return read_regular(path, C.SNAPSHOT_MAX_BYTES + 1, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno in (errno.EINVAL, errno.ELOOP):
            return "corrupt", "it is not a regular file"
        raise SnapshotError(f"snapshot {path} cannot be read: {exc}") from exc


def _state_of(data: bytes | tuple[str, str], root: Path) -> dict[str, object] | tuple[str, str]:
    """A snapshot file's state, or (reason tag, explanation) when it cannot be used."""
    if isinstance(data, tuple):
        return data
    if len(data) > C.SNAPSHOT_MAX_BYTES:
        return "oversized", f"it is over SNAPSHOT_MAX_BYTES ({C.SNAPSHOT_MAX_BYTES} bytes)"
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError:
        return "corrupt", "it is not valid JSON"
    problem = _problem(document, root)
    if problem is not None:
        return problem
    state: dict[str, object] = document["state"]
    return state


def _problem(document: object, root: Path) -> tuple[str, str] | None:
    """(reason tag, explanation) when a parsed snapshot cannot be used for `root`."""
    if not isinstance(document, dict):
        return "corrupt", "it is not a JSON object"
    version = document.get("format_version")
    if type(version) is not int or version != C.SNAPSHOT_FORMAT_VERSION:
        return "version", f"unknown format_version {version!r}"
    if document.get("root") != str(root):
        return "wrong-root", f"it belongs to {document.get('root')!r}, not {str(root)!r}"
    if not isinstance(document.get("state"), dict):
        return "corrupt", "its state is not a JSON object"
    return None


def _read_root(path: Path) -> Path | None:
    """The root a snapshot names, read from the file's head (a root is at most PATH_MAX,
    4096 bytes, well inside it); None when it is not one of ours."""
    try:  # a FIFO among the snapshots must not block the listing (the dashboard)
        match = _HEAD.match(read_regular(path, C.SNAPSHOT_HEAD_BYTES, follow_symlinks=False))
    except OSError:
        return None
    if match is None or int(match.group(1)) != C.SNAPSHOT_FORMAT_VERSION:
        return None
    try:
        root = orjson.loads(match.group(2))
    except orjson.JSONDecodeError:
        return None
    return Path(root) if isinstance(root, str) and root else None
