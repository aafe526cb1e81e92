"""Property tests: whatever string the model sends, the jail holds."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from live_memory.errors import PathOutsideWorkspace
from live_memory.tools import Toolbox, resolve_in_root

SEGMENTS = st.sampled_from(
    ["..", ".", "", "a", "b", "link_out", "link_up", "link_root", "loop", "file.txt", "~", "..."]
)
PATHS = st.one_of(
    st.text(max_size=60),
    st.lists(SEGMENTS, max_size=8).map("/".join),
    st.lists(SEGMENTS, max_size=8).map(lambda parts: "/" + "/".join(parts)),
)


@pytest.fixture(scope="module")
def jail_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("jail")
    root = base / "root"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "file.txt").write_text("inside\n", encoding="utf-8")
    (base / "outside").mkdir()
    (base / "outside" / "file.txt").write_text("OUTSIDE-CONTENT\n", encoding="utf-8")
    os.symlink(base / "outside", root / "link_out")
    os.symlink("..", root / "a" / "link_up")  # stays inside: a/.. is the root
    os.symlink(root, root / "a" / "link_root")
    os.symlink("loop", root / "loop")  # a symlink loop
    return root


def _inside(path: Path, root: Path) -> bool:
    real = os.path.realpath(root)
    return str(path) == real or str(path).startswith(real + os.sep)


def test_a_link_past_a_symlink_loop_is_still_resolved_and_refused(jail_root: Path) -> None:
    # realpath stops at the loop and returns `root/link_out` as written: a link to outside.
    for user_path in ("loop/../link_out", "loop/../link_out/file.txt"):
        with pytest.raises(PathOutsideWorkspace):
            resolve_in_root(jail_root, user_path)


@settings(max_examples=300, deadline=None)
@given(PATHS)
def test_resolved_paths_never_leave_the_root(jail_root: Path, user_path: str) -> None:
    try:
        resolved = resolve_in_root(jail_root, user_path)
    except PathOutsideWorkspace:
        return
    assert _inside(resolved, jail_root)
    assert os.path.realpath(resolved) == str(resolved)  # nothing left to resolve


@settings(max_examples=150, deadline=None)
@given(PATHS)
def test_read_never_raises_and_never_shows_outside_content(jail_root: Path, user_path: str) -> None:
    outcome = Toolbox(jail_root).run("Read", {"file_path": user_path})
    assert "OUTSIDE-CONTENT" not in outcome.text
    for read in outcome.reads:
        assert not read.path.startswith("..")
