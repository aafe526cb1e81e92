"""No git call runs what the repository configures; a stuck git dies with its children."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from live_memory.safe_git import _run_all, git_environment, run_git_commands
from live_memory.tools import Toolbox
from live_memory.watchers.git_process import run_git as watcher_git
from tests.support.repo import git, make_repo


@pytest.fixture
def hostile(tmp_path: Path) -> tuple[Path, Path]:
    """A repository whose config names a program for every hook git offers, each of which
    would leave a marker file (and the filter would hang for a minute)."""
    markers = tmp_path / "markers"
    markers.mkdir()
    repo = make_repo(
        tmp_path / "repo",
        {".gitattributes": "* filter=evil diff=evil merge=evil\n", "a.txt": "one\n"},
    )

    def program(name: str, tail: str = "") -> str:
        return f"touch {markers}/{name}; {tail}"

    (repo / "a.txt").write_text("one\ntwo\n", encoding="utf-8")
    git(repo, "commit", "-q", "-am", "second")  # a diff for git_search's patch (textconv)
    settings = {
        "filter.evil.clean": program("clean", "sleep 60; cat"),
        "filter.evil.smudge": program("smudge", "cat"),
        "filter.evil.process": program("process", "sleep 60"),
        "filter.evil.required": "true",
        "diff.evil.textconv": program("textconv", "cat"),
        "diff.evil.command": program("diff_command"),
        "merge.evil.driver": program("merge"),
        "core.fsmonitor": program("fsmonitor"),
        "core.hooksPath": str(tmp_path / "hooks"),
        "diff.external": program("external_diff"),
        "core.pager": program("pager", "cat"),
        "log.showSignature": "true",
        "gpg.program": program("gpg"),
    }
    for key, value in settings.items():
        git(repo, "config", key, value)
    (repo / "a.txt").write_text("one\ntwo\nthree\n", encoding="utf-8")  # status reads it
    os.utime(repo / "a.txt", (1, 1))
    return repo, markers


def test_the_git_tools_run_nothing_the_repository_configures(hostile: tuple[Path, Path]) -> None:
    repo, markers = hostile
    toolbox = Toolbox(repo)
    started = time.monotonic()
    changed = toolbox.run("get_changed_files", {})
    assert "a.txt" in changed.text, changed.text
    assert not toolbox.run("git_search", {"query": "second", "patch": True}).is_error
    assert "a.txt" in toolbox.run("Glob", {"pattern": "*.txt"}).text
    assert "a.txt" in toolbox.run("Grep", {"pattern": "one"}).text
    assert watcher_git(repo, ["check-ignore", "-z", "--stdin"], stdin=b"a.txt\0") is not None
    assert watcher_git(repo, ["diff-tree", "-r", "-z", "--name-only", "HEAD~1", "HEAD"])
    assert sorted(os.listdir(markers)) == []
    assert time.monotonic() - started < 30  # the filter would have slept 60 s per file


def test_git_environment_drops_what_would_run_programs() -> None:
    env = git_environment({"GIT_EXTERNAL_DIFF": "x", "GIT_SSH_COMMAND": "x", "HOME": "/h"})
    assert "GIT_EXTERNAL_DIFF" not in env
    assert "GIT_SSH_COMMAND" not in env
    assert env["GIT_CONFIG_NOSYSTEM"] == "1"
    assert env["HOME"] == "/h"


def test_a_command_past_its_deadline_is_killed_with_its_whole_process_group(
    tmp_path: Path,
) -> None:
    pid_file = tmp_path / "child.pid"
    script = f"sleep 60 & echo $! > {pid_file}; wait"
    started = time.monotonic()
    [run] = _run_all(
        tmp_path, [["sh", "-c", script]], git_environment(), time.monotonic() + 1, None
    )
    assert run.returncode is None
    assert time.monotonic() - started < 30
    child = int(pid_file.read_text())
    # The background sleep was in the group: it is gone (or a zombie awaiting init).
    deadline = time.monotonic() + 10
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
            return handle.read().split(") ")[1][0] != "Z"
    except FileNotFoundError:
        return False


def test_a_missing_git_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(FileNotFoundError):
        run_git_commands(tmp_path, [["status"]], timeout=5)
    assert sys.executable  # the interpreter itself needs no PATH
