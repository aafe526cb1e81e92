"""The jail under concurrent directory swaps, and git's own files refused everywhere."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from live_memory.tools import Toolbox, beneath, build_directory_tree
from tests.support.repo import git, make_repo
from tests.tools.conftest import write_tree

OUTSIDE = "OUTSIDE-BYTES"


@pytest.fixture(params=["openat2", "walk"])
def resolution(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both ways the jail confines an open: the kernel's, and the no-follow walk."""
    if request.param == "walk":
        monkeypatch.setattr(beneath._SYSCALL, "function", None)
    elif beneath._SYSCALL.function is None:
        pytest.skip("this kernel has no openat2")
    return str(request.param)


def test_no_byte_from_outside_reaches_a_tool_under_a_rename_loop(
    tmp_path: Path, resolution: str
) -> None:
    root = write_tree(tmp_path / "root", {"d/f.txt": "inside TODO\n", "d/sub/g.txt": "TODO in\n"})
    outside = write_tree(tmp_path / "outside", {"f.txt": f"{OUTSIDE} TODO\n"})
    write_tree(outside, {"sub/g.txt": f"{OUTSIDE} TODO\n"})
    toolbox = Toolbox(root)
    stop = threading.Event()

    def swap() -> None:
        # d becomes a symlink to the outside directory and back, as fast as it can.
        while not stop.is_set():
            os.rename(root / "d", root / "d_real")
            os.symlink(outside, root / "d")
            os.unlink(root / "d")
            os.rename(root / "d_real", root / "d")

    swapper = threading.Thread(target=swap)
    swapper.start()
    results: list[str] = []
    try:
        for index in range(2000):
            results.append(toolbox.run("Read", {"file_path": "d/f.txt"}).text)
            results.append(toolbox.run("Read", {"file_path": "d/sub/g.txt"}).text)
            if index % 20 == 0:  # rg is a process per call: fewer of those
                arguments = {"pattern": "TODO", "output_mode": "content"}
                results.append(toolbox.run("Grep", {**arguments, "path": "d"}).text)
                results.append(toolbox.run("Grep", {**arguments, "path": "d/f.txt"}).text)
                results.append(toolbox.run("Glob", {"pattern": "**/*.txt", "path": "d"}).text)
    finally:
        stop.set()
        swapper.join()
    leaked = [text for text in results if OUTSIDE in text]
    assert leaked == []
    assert len(results) >= 4000
    # The same calls work once the swapping stops (so the loop tested real reads).
    assert "inside TODO" in toolbox.run("Read", {"file_path": "d/f.txt"}).text
    assert (
        "d/f.txt:1:inside TODO"
        in toolbox.run("Grep", {"pattern": "TODO", "path": "d", "output_mode": "content"}).text
    )


def test_git_internals_are_refused_by_every_tool(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {"a.py": "TODO\n"})
    git(root, "config", "http.extraheader", "AUTHORIZATION: basic c2VjcmV0")
    nested = root / "nested"
    nested.mkdir()
    git(nested, "init", "-q")
    git(nested, "config", "http.extraheader", "AUTHORIZATION: basic bmVzdGVk")
    toolbox = Toolbox(root)
    for path in (".git/config", "nested/.git/config", "./.git/HEAD", "nested/../.git/config"):
        outcome = toolbox.run("Read", {"file_path": path})
        assert outcome.is_error, path
        assert "git directory" in outcome.text, outcome.text
    for arguments in ({"path": ".git"}, {"path": "nested/.git"}, {"path": ".git/config"}):
        outcome = toolbox.run("Grep", {"pattern": "extraheader", **arguments})
        assert outcome.is_error, arguments
    everywhere = toolbox.run("Grep", {"pattern": "extraheader|basic"}).text
    assert everywhere.startswith("No matches"), everywhere
    globbed = toolbox.run("Glob", {"pattern": "**/config"}).text
    assert globbed.startswith("No files match"), globbed
    assert toolbox.run("Glob", {"pattern": "*", "path": ".git"}).is_error


def test_a_git_directory_named_by_a_dot_git_file_is_refused(tmp_path: Path) -> None:
    # `git init --separate-git-dir` inside the work tree: the root's .git is a file.
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "--separate-git-dir", str(root / "gitstore"))
    git(root, "config", "http.extraheader", "AUTHORIZATION: basic c2VwYXJhdGU=")
    toolbox = Toolbox(root)
    outcome = toolbox.run("Read", {"file_path": "gitstore/config"})
    assert outcome.is_error
    assert "git directory" in outcome.text
    assert toolbox.run("Read", {"file_path": ".git"}).is_error
    assert "c2VwYXJhdGU" not in toolbox.run("Grep", {"pattern": "extraheader|basic"}).text


def test_a_dot_git_symlink_to_a_directory_in_the_workspace_is_refused_by_every_tool(
    tmp_path: Path,
) -> None:
    # git follows a `.git` symlink: its target is the git directory under another name.
    root = make_repo(tmp_path / "repo", {"a.py": "TODO\n"})
    git(root, "config", "http.extraheader", "AUTHORIZATION: basic c3ltbGlua2Vk")
    (root / ".git").rename(root / "meta")
    (root / ".git").symlink_to("meta")
    toolbox = Toolbox(root)
    for path in ("meta/config", str(root / "meta" / "config"), "meta/HEAD"):
        outcome = toolbox.run("Read", {"file_path": path})
        assert outcome.is_error and "git directory" in outcome.text, outcome.text
    assert toolbox.run("Grep", {"pattern": "extraheader", "path": "meta"}).is_error
    everywhere = toolbox.run("Grep", {"pattern": "extraheader|basic", "output_mode": "content"})
    assert "c3ltbGlua2Vk" not in everywhere.text and everywhere.text.startswith("No matches")
    assert toolbox.run("Glob", {"pattern": "**/config"}).text.startswith("No files match")
    assert "meta/" not in toolbox.run("find_paths", {"name": "*"}).text
    assert "meta" not in build_directory_tree(root, 10_000)
    assert "a.py" in toolbox.run("Glob", {"pattern": "*.py"}).text
    assert not toolbox.run("get_changed_files", {}).is_error  # it is this work tree's own
