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


def test_drivers_whose_names_hold_equals_signs_or_quotes_run_nothing(tmp_path: Path) -> None:
    # `-c filter.a=b.clean=` is split at its first `=` (git sets `filter.a` to `b.clean=`),
    # so the driver stayed live; a driver named `=` made every `-c` fail to parse.
    markers = tmp_path / "markers"
    markers.mkdir()
    names = {"a.txt": "a=b", "b.txt": "=", "c.txt": "q\"u'o=te", "d.txt": "=x=.clean"}
    attributes = "".join(f"{f} filter={n} diff={n} merge={n}\n" for f, n in names.items())
    repo = make_repo(
        tmp_path / "repo", {".gitattributes": attributes, **{f: "one\n" for f in names}}
    )
    for file in names:
        (repo / file).write_text("one\ntwo\n", encoding="utf-8")
    git(repo, "commit", "-q", "-am", "second")  # a patch for git_search (textconv)
    for file, name in [*names.items(), ("e.txt", "sp ace"), ("f.txt", "tab\there")]:
        for key, tail in [
            ("filter.{}.clean", "sleep 60; cat"),
            ("filter.{}.smudge", "cat"),
            ("filter.{}.process", "sleep 60"),
            ("diff.{}.textconv", "cat"),
            ("diff.{}.command", ""),
            ("merge.{}.driver", ""),
        ]:
            program = f"touch '{markers}/{key.split('.')[-1]}-{file}'; {tail}"
            git(repo, "config", key.format(name), program)
        git(repo, "config", f"filter.{name}.required", "true")
    for file in names:
        (repo / file).write_text("one\ntwo\nthree\n", encoding="utf-8")  # status cleans it
        os.utime(repo / file, (1, 1))
    toolbox = Toolbox(repo)
    changed = toolbox.run("get_changed_files", {})
    assert not changed.is_error, changed.text
    assert all(file in changed.text for file in names), changed.text
    searched = toolbox.run("git_search", {"query": "second", "patch": True})
    assert not searched.is_error and "+two" in searched.text, searched.text
    assert "b.txt" in toolbox.run("Glob", {"pattern": "*.txt"}).text
    assert "b.txt" in toolbox.run("Grep", {"pattern": "three"}).text
    assert "b.txt" in toolbox.run("find_paths", {"name": "b.txt"}).text
    assert watcher_git(repo, ["check-ignore", "-z", "--stdin"], stdin=b"a.txt\0") is not None
    assert watcher_git(repo, ["diff-tree", "-r", "-z", "--name-only", "HEAD~1", "HEAD"])
    assert watcher_git(repo, ["ls-files", "-z", "-c", "-i", "--exclude-standard"])
    assert sorted(os.listdir(markers)) == []


def test_a_git_too_old_to_take_overrides_from_the_environment_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # git < 2.31 ignores GIT_CONFIG_COUNT (no override would hold) and echoes the
    # `--path-format` it does not know; this stand-in does the same and marks any other call.
    marker = tmp_path / "ran"
    shim = tmp_path / "bin" / "git"
    shim.parent.mkdir()
    shim.write_text(
        '#!/bin/sh\ncase "$*" in\n*rev-parse*) echo --path-format=absolute; echo .git;;\n'
        f"*config*) exit 1;;\n*) : > {marker};;\nesac\n",
        encoding="utf-8",
    )
    shim.chmod(0o755)
    monkeypatch.setenv("PATH", str(shim.parent))
    with pytest.raises(FileNotFoundError, match=r"2\.31 or newer"):
        run_git_commands(tmp_path, [["status"]], timeout=5)
    assert not marker.exists()
