"""Files opened by path are read only when they are regular files, and never block."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from live_memory.regular_file import read_regular
from tests.support.fifo import plant_fifo, without_blocking


def test_a_fifo_device_or_directory_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = plant_fifo(tmp_path / "pipe")
    for special in (fifo, Path("/dev/zero"), tmp_path):
        with pytest.raises(OSError) as refused:
            without_blocking(lambda p=special: read_regular(p), fifo)  # type: ignore[misc]
        assert refused.value.errno in (errno.EINVAL, errno.EISDIR), special


def test_a_link_is_followed_only_when_asked(tmp_path: Path) -> None:
    (tmp_path / "real").write_bytes(b"content")
    os.symlink(tmp_path / "real", tmp_path / "link")
    assert read_regular(tmp_path / "link", 4) == b"cont"
    with pytest.raises(OSError) as refused:
        read_regular(tmp_path / "link", follow_symlinks=False)
    assert refused.value.errno == errno.ELOOP
    os.symlink(plant_fifo(tmp_path / "pipe"), tmp_path / "to-pipe")
    with pytest.raises(OSError):
        without_blocking(lambda: read_regular(tmp_path / "to-pipe"), tmp_path / "pipe")
