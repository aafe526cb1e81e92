"""Opening a file by path only when it is a regular file.

A FIFO where a file was expected (a hostile repository's `.gitignore` or `info/exclude`, a
snapshot or config file planted in the data directory) blocks a plain `open()` until a writer
comes, forever; a device never ends (`/dev/zero`). Such a file is opened non-blocking, then
checked on the descriptor (no window between a check and the open) and refused. The
workspace tools' jail does the same beneath the root (tools/beneath.py); this is for the
paths the server opens by name.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

__all__ = ["open_regular", "read_regular"]

READ_CHUNK = 1 << 16


def open_regular(path: str | Path, *, follow_symlinks: bool = True) -> int:
    """A read-only descriptor of `path` (the caller closes it). Never blocks on a FIFO.

    Raises OSError: the open's own, or EINVAL when `path` is not a regular file (a FIFO,
    device, socket or directory; with `follow_symlinks=False`, also a symbolic link: ELOOP).
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC
    fd = os.open(path, flags if follow_symlinks else flags | os.O_NOFOLLOW)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        # Reads of a regular file never block; clearing the flag keeps later users plain.
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular(
    path: str | Path, max_bytes: int | None = None, *, follow_symlinks: bool = True
) -> bytes:
    """The bytes of the regular file `path` (its first `max_bytes`, when given).

    Raises OSError, as `open_regular`.
    """
    fd = open_regular(path, follow_symlinks=follow_symlinks)
    with os.fdopen(fd, "rb") as handle:
        return handle.read() if max_bytes is None else handle.read(max_bytes)
