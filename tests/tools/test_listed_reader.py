from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from live_memory.config.constants import DEFAULT_SECRET_PATH_PATTERNS
from live_memory.errors import PathOutsideWorkspace
from live_memory.tools.jail import UnreadableFile
from live_memory.tools.workspace_read import ListedFileReader


@pytest.fixture(scope="module")
def linked_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("listed")
    root = base / "root"
    (root / "real").mkdir(parents=True)
    (root / "real" / "a.txt").write_text("inside\n", encoding="utf-8")
    (root / ".env").write_text("KEY=1\n", encoding="utf-8")
    (base / "out").mkdir()
    (base / "out" / "x.txt").write_text("OUTSIDE\n", encoding="utf-8")
    os.symlink("real", root / "alias")
    os.symlink(base / "out", root / "outdir")
    os.symlink(base / "out" / "x.txt", root / "outfile.txt")
    os.mkfifo(root / "pipe")
    return root


def _reader(root: Path) -> ListedFileReader:
    return ListedFileReader(root, DEFAULT_SECRET_PATH_PATTERNS)


def test_listed_reader_reads_plain_files_and_heads(linked_root: Path) -> None:
    reader = _reader(linked_root)
    assert reader.read("real/a.txt", 100) == b"inside\n"
    assert reader.head("real/a.txt", 3) == b"ins"


def test_listed_reader_follows_a_directory_link_that_stays_inside(linked_root: Path) -> None:
    assert _reader(linked_root).read("alias/a.txt", 100) == b"inside\n"


@pytest.mark.parametrize(
    "rel", ["outdir/x.txt", "outfile.txt", "../out/x.txt", "real/../../out/x.txt"]
)
def test_listed_reader_refuses_paths_that_leave_the_root(linked_root: Path, rel: str) -> None:
    with pytest.raises(PathOutsideWorkspace):
        _reader(linked_root).read(rel, 100)


def test_listed_reader_refuses_fifos_secrets_and_oversized_files(linked_root: Path) -> None:
    reader = _reader(linked_root)
    with pytest.raises(UnreadableFile, match="FIFO"):
        reader.head("pipe")
    with pytest.raises(UnreadableFile, match="secret"):
        reader.read(".env", 100)
    with pytest.raises(UnreadableFile, match="read limit"):
        reader.read("real/a.txt", 3)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "real",
                "alias",
                "outdir",
                "..",
                ".",
                "",
                "a.txt",
                "x.txt",
                "outfile.txt",
                "pipe",
                ".env",
            ]
        ),
        min_size=1,
        max_size=5,
    ).map("/".join)
)
def test_listed_reader_never_reads_outside_whatever_the_path(linked_root: Path, rel: str) -> None:
    try:
        data = _reader(linked_root).read(rel, 1000)
    except (PathOutsideWorkspace, UnreadableFile):
        return
    assert data == b"inside\n"
