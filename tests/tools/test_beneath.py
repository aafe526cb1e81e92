"""open_beneath: links inside the root are followed, nothing leads out, both ways of doing it."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from live_memory.tools import beneath
from live_memory.tools.beneath import inside_root, open_beneath


@pytest.fixture(params=["openat2", "walk"])
def root(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    if request.param == "walk":
        monkeypatch.setattr(beneath._SYSCALL, "function", None)
    elif beneath._SYSCALL.function is None:
        pytest.skip("this kernel has no openat2")
    real = os.path.realpath(tmp_path / "root")
    os.makedirs(f"{real}/a/b")
    Path(f"{real}/a/b/f.txt").write_text("in", encoding="utf-8")
    os.makedirs(tmp_path / "outside")
    Path(tmp_path / "outside" / "f.txt").write_text("out", encoding="utf-8")
    os.symlink("b", f"{real}/a/rel_link")
    os.symlink(f"{real}/a", f"{real}/abs_inside")
    os.symlink(str(tmp_path / "outside"), f"{real}/abs_out")
    os.symlink("../outside", f"{real}/rel_out")
    os.symlink("loop2", f"{real}/loop1")
    os.symlink("loop1", f"{real}/loop2")
    return real


@pytest.mark.parametrize(
    ("rel", "where"),
    [
        ("a/b/f.txt", "a/b/f.txt"),
        ("a/rel_link/f.txt", "a/b/f.txt"),
        ("abs_inside/b/f.txt", "a/b/f.txt"),
        ("a/b/../b/./f.txt", "a/b/f.txt"),
        ("", ""),
        ("a", "a"),
    ],
)
def test_paths_inside_open_where_they_really_are(root: str, rel: str, where: str) -> None:
    opened = open_beneath(root, rel)
    try:
        assert opened.rel == where
    finally:
        os.close(opened.fd)


@pytest.mark.parametrize("rel", ["abs_out/f.txt", "rel_out/f.txt", "../outside/f.txt", "a/../.."])
def test_nothing_leads_out(root: str, rel: str) -> None:
    with pytest.raises(OSError) as raised:
        os.close(open_beneath(root, rel).fd)
    assert raised.value.errno == errno.EXDEV


def test_loops_missing_files_and_files_as_directories_are_errors(root: str) -> None:
    with pytest.raises(OSError) as loop:
        open_beneath(root, "loop1")
    assert loop.value.errno == errno.ELOOP
    with pytest.raises(FileNotFoundError):
        open_beneath(root, "a/missing")
    with pytest.raises(NotADirectoryError):
        open_beneath(root, "a/b/f.txt/x")
    with pytest.raises(NotADirectoryError):
        open_beneath(root, "a/b/f.txt", directory=True)


def test_inside_root_keeps_only_paths_that_open_inside(root: str) -> None:
    paths = ["a/b/f.txt", "abs_out/f.txt", "missing", "a/rel_link/f.txt", "rel_out/f.txt"]
    assert inside_root(root, paths, 10) == ["a/b/f.txt", "a/rel_link/f.txt"]
    assert inside_root(root, paths, 1) == ["a/b/f.txt"]
