"""A real, small file system (tmpfs) mounted for one test, to fill up or mount read-only.

Mounting needs root (the suite runs as root locally and in CI); where the mount syscall is
refused the test is skipped, saying so, rather than faking a full disk."""

from __future__ import annotations

import contextlib
import errno
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = ["fill", "small_disk"]

FILL_CHUNK = 64 * 1024


@contextlib.contextmanager
def small_disk(where: Path, size: str = "8m") -> Iterator[Path]:
    """A tmpfs of `size` mounted at `where` (created) while the block runs."""
    mount = shutil.which("mount")
    if mount is None:
        pytest.skip("no mount(8) here to make a small real file system")
    where.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [mount, "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(where)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"mounting a tmpfs was refused: {done.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False, capture_output=True)


def fill(path: Path) -> None:
    """Write `path` until the file system it is on has no block left (ENOSPC)."""
    chunk = b"\0" * FILL_CHUNK
    with path.open("wb", buffering=0) as handle:
        try:
            while True:
                handle.write(chunk)
        except OSError as exc:
            if exc.errno != errno.ENOSPC:  # the goal; anything else is a broken fixture
                raise
    with contextlib.suppress(OSError), path.open("ab", buffering=0) as handle:
        while True:  # the last partial block: single bytes until not even one fits
            handle.write(b"\0")
