"""Atomic replacement: owner-only, whole, no temporary file left behind. (A failing write
keeping the old file is shown through the snapshot store, tests/memory/test_snapshot_store.py.)"""

from __future__ import annotations

import stat
from pathlib import Path

from live_memory.atomic_file import write_atomically


def test_a_file_is_created_owner_only_then_replaced_whole(tmp_path: Path) -> None:
    path = tmp_path / "deeper" / "state.json"
    write_atomically(path, b"old")
    write_atomically(path, b"new", sync_directory=True)
    assert path.read_bytes() == b"new"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert sorted(p.name for p in path.parent.iterdir()) == ["state.json"]
