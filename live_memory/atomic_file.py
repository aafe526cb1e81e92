"""Writing a file so that a reader, or a crash, sees the old content or the new, never a part."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

__all__ = ["fsync_directory", "write_atomically"]


def write_atomically(
    path: Path, data: bytes, *, sync: bool = True, sync_directory: bool = False
) -> None:
    """Replace `path` with `data`: a temporary file beside it, flushed and fsynced, renamed over.

    The file is owner-only (mkstemp creates it 0600), so secrets are never readable by others,
    not even briefly. `sync_directory` also fsyncs the directory, so the rename itself survives
    a power loss (where the platform supports it). `sync=False` skips the file's fsync: the
    new content then survives a crash of this process (it is in the kernel once this returns)
    but not necessarily a power loss. Missing parent directories are created.
    Raises OSError; the temporary file never outlives a failure.
    """
    try:
        fd, temp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except FileNotFoundError:  # the parent is missing: only then pay for creating it
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if sync:
                os.fsync(handle.fileno())
        os.replace(temp_name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp_name)
        raise
    if sync_directory:
        fsync_directory(path.parent)


def fsync_directory(directory: Path, sync: Callable[[int], None] = os.fsync) -> None:
    """Makes a rename in `directory` durable; not every platform/file system supports it."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        sync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
