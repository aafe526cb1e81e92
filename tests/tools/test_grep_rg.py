"""Grep on ripgrep as it is: what rg decides (ignores, binaries, links), what Grep adds
(git internals, globs as rg's `--glob`, submodules, big files, redaction
of the lines shown with their neighbourhood), and a fallback that cannot freeze the server."""

from __future__ import annotations

import os
import re
import threading
import time
from pathlib import Path

import pytest

from live_memory.config.constants import (
    GREP_OPEN_FILES_MAX,
    READ_MAX_FILE_BYTES,
    SECRET_REDACTION,
)
from live_memory.hygiene import SECRET_HINT
from live_memory.tools import Toolbox
from live_memory.tools.ripgrep import find_ripgrep
from tests.support.repo import git, make_repo
from tests.tools.conftest import write_tree

PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    + "".join(f"MIIEpAIBAAKCAQEA{n:02d}q8d0sVbVZx3mZr0aQ9Jk2TcLr6GhP\n" for n in range(30))
    + "TODOabc==\n"  # the short last body line, alone it looks like nothing
    + "-----END RSA PRIVATE KEY-----\n"
)


def _paths(text: str) -> list[str]:
    if text.startswith("No matches"):
        return []
    return [line for line in text.split("\n") if line and not line.startswith(("Found", "["))]


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("rg")
    library = make_repo(base / "library", {"lib.py": "def vendored():  # TODO upstream\n"})
    root = make_repo(
        base / "repo",
        {
            ".gitignore": "*.log\nbuild/\n",
            "src/app.py": "# TODO: ship it\n",
            "src/deep/test_x.py": "TODO deep\n",
            "docs/a.md": "TODO docs\n",
            "keys/fixture.txt": "intro\n" + PEM,
        },
    )
    write_tree(root, {"debug.log": "TODO ignored log\n", "build/out.py": "TODO built\n"})
    git(root, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library), "vendor")
    git(root, "commit", "-q", "-m", "submodule")
    git(root, "config", "http.extraheader", "TODO basic dG9rZW4=")  # what CI checkouts write
    nested = root / "nested"
    nested.mkdir()
    git(nested, "init", "-q")
    (nested / ".git" / "description").write_text("TODO nested internals\n", encoding="utf-8")
    big = root / "big.txt"
    with big.open("wb") as handle:
        handle.write(b"start\n")
        handle.write((b"filler line\n") * ((READ_MAX_FILE_BYTES // 12) + 1000))
        handle.write(b"TODO at the end of a big file\n")
    return root


def test_rg_decides_ignores_and_grep_never_searches_git_internals(repo: Path) -> None:
    text = Toolbox(repo).run("Grep", {"pattern": "TODO"}).text
    assert _paths(text) == [  # (keys/fixture.txt's TODO lies in a key block Read redacts)
        "big.txt",
        "docs/a.md",
        "src/app.py",
        "src/deep/test_x.py",
        "vendor/lib.py",  # a submodule's content is part of the workspace
    ]
    for path in (".git", "nested/.git"):
        refused = Toolbox(repo).run("Grep", {"pattern": "TODO", "path": path})
        assert refused.is_error
        assert "git directory" in refused.text


@pytest.mark.parametrize(
    ("glob", "expected"),
    [
        ("*.log", ["debug.log"]),  # as `rg --glob`: a glob naming files matches ignored ones
        ("*.py", ["src/app.py", "src/deep/test_x.py", "vendor/lib.py"]),  # not build/out.py
        ("src/**/test_*.py", ["src/deep/test_x.py"]),
        ("src/*.py", ["src/app.py"]),
        ("!*.{py,txt}", ["docs/a.md"]),
        ("!src/**", ["big.txt", "docs/a.md", "vendor/lib.py"]),
        ("{docs,vendor}/*", ["docs/a.md", "vendor/lib.py"]),
    ],
)
def test_globs_narrow_the_walk_and_apply_exactly(
    repo: Path, glob: str, expected: list[str]
) -> None:
    text = Toolbox(repo).run("Grep", {"pattern": "TODO", "glob": glob}).text
    assert _paths(text) == expected, text


def test_a_file_read_refuses_as_too_big_is_searched_and_shown_capped(repo: Path) -> None:
    toolbox = Toolbox(repo)
    refused = toolbox.run("Read", {"file_path": "big.txt"})
    assert refused.is_error
    assert "Grep searches it" in refused.text
    named = toolbox.run("Grep", {"pattern": "TODO", "path": "big.txt", "output_mode": "content"})
    number = (READ_MAX_FILE_BYTES // 12) + 1000 + 2
    assert named.text == f"big.txt:{number}:TODO at the end of a big file"
    walked = toolbox.run("Grep", {"pattern": "filler", "output_mode": "content", "head_limit": 3})
    assert walked.text.split("\n")[:3] == [f"big.txt:{n}:filler line" for n in (2, 3, 4)]
    assert "more exist" in walked.text


def test_lines_inside_a_pem_block_are_matched_as_read_shows_them_redacted(repo: Path) -> None:
    arguments = {"pattern": "^TODOabc|^MIIEpAIBAAKCAQEA05", "path": "keys"}
    for mode in ("content", "files_with_matches", "count"):
        text = Toolbox(repo).run("Grep", {**arguments, "output_mode": mode}).text
        assert text.startswith("No matches"), text
    read = Toolbox(repo).run("Read", {"file_path": "keys/fixture.txt"}).text
    assert "TODOabc" not in read and "MIIEpAIBAAKCAQEA05" not in read


@pytest.mark.parametrize("block", [1, 40, 200])
def test_a_pem_block_across_read_blocks_is_withheld_the_same(
    tmp_path: Path, block: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lines are read in blocks and only a block holding `-----` is scanned line by line: a
    BEGIN in one block still withholds the body lines in later blocks, an END releases."""
    body = "".join(f"TODO line {n} MIIEpAIBAAKCAQEA{n:02d}\n" for n in range(5))
    text = f"TODO before\n{PEM.replace('TODOabc', body)}TODO after\n"
    root = write_tree(tmp_path / "pem", {"k.txt": text})
    arguments = {"pattern": "TODO", "output_mode": "content"}
    expected = Toolbox(root).run("Grep", arguments).text
    monkeypatch.setattr("live_memory.config.constants.GREP_READ_BLOCK_BYTES", block)
    assert Toolbox(root).run("Grep", arguments).text == expected
    assert expected.splitlines()[0] == "k.txt:1:TODO before"
    assert expected.splitlines()[-1] == f"k.txt:{text.count(chr(10))}:TODO after"
    assert expected.count(SECRET_REDACTION) == 5 and "MIIEpAIBAAKCAQEA" not in expected


def test_submodule_content_is_searched_and_globbed(repo: Path) -> None:
    toolbox = Toolbox(repo)
    found = toolbox.run("Grep", {"pattern": "vendored", "output_mode": "content"})
    assert found.text == "vendor/lib.py:1:def vendored():  # TODO upstream"
    inside = toolbox.run("Grep", {"pattern": "vendored", "path": "vendor"})
    assert _paths(inside.text) == ["vendor/lib.py"]
    assert toolbox.run("Glob", {"pattern": "vendor/*.py"}).text == "vendor/lib.py"
    assert toolbox.run("Grep", {"pattern": "vendored", "glob": "vendor/*"}).text.endswith(
        "vendor/lib.py"
    )


def test_outside_git_rg_honours_gitignore_and_skips_dependency_trees(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path / "plain",
        {
            ".gitignore": "*.log\n",
            "a.py": "TODO a\n",
            "x.log": "TODO log\n",
            "node_modules/pkg/index.js": "TODO dependency\n",
        },
    )
    assert _paths(Toolbox(root).run("Grep", {"pattern": "TODO"}).text) == ["a.py"]


def test_the_python_fallback_runs_a_catastrophic_regex_without_freezing_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write_tree(tmp_path / "plain", {"a.txt": "a" * 40 + "!\n"})
    monkeypatch.setattr("live_memory.config.constants.TOOL_SUBPROCESS_TIMEOUT_S", 2.0)
    toolbox = Toolbox(root, use_ripgrep=False)
    ticks = 0
    done = threading.Event()

    def tick() -> None:  # the GIL stays free: this thread keeps running meanwhile
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            time.sleep(0.01)

    ticker = threading.Thread(target=tick)
    ticker.start()
    started = time.monotonic()
    try:
        outcome = toolbox.run("Grep", {"pattern": "^(a+)+$"})  # 2^40 steps when backtracking
    finally:
        done.set()
        ticker.join()
    assert outcome.is_error
    assert "ran out of time" in outcome.text
    assert time.monotonic() - started < 30
    assert ticks >= 20
    assert not os.path.exists(root / "core")


def _walks(calls: Path) -> list[str]:
    """The rg runs for the pattern; each other one looks for SECRET_HINT in the files found,
    by name, never in a walk of its own (the tree is small)."""
    runs = calls.read_text(encoding="utf-8").splitlines()
    for run in (run for run in runs if f" -- {SECRET_HINT} " in run):
        assert " -l " in run and "--glob" not in run
    return [run for run in runs if f" -- {SECRET_HINT}" not in run]


def _wrapped_rg(tmp_path: Path, after: str = "") -> tuple[Path, Path]:
    """An rg that logs its arguments to `calls` (then runs `after`, if given)."""
    rg = find_ripgrep()
    assert rg is not None
    calls, wrapper = tmp_path / "calls", tmp_path / "rg"
    run = f'{rg} "$@"\nstatus=$?\n{after}\nexit $status\n' if after else f'exec {rg} "$@"\n'
    wrapper.write_text(f'#!/bin/sh\necho "$@" >> {calls}\n{run}', encoding="utf-8")
    wrapper.chmod(0o755)
    return calls, wrapper


@pytest.mark.parametrize("mode", ["files_with_matches", "count", "content"])
def test_every_search_walks_once_and_content_numbers_in_that_walk(
    repo: Path, tmp_path: Path, mode: str
) -> None:
    """One rg walk per search: `-l`, `-c`, or in content mode `-n` (no second walk: on a small
    tree its spawn cost as much as a third of the walk); the files found are looked at by name
    for a secret hint."""
    calls, wrapper = _wrapped_rg(tmp_path)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("live_memory.tools.toolbox.find_ripgrep", lambda: str(wrapper))
        found = Toolbox(repo).run("Grep", {"pattern": "TODO", "output_mode": mode, "glob": "*.md"})
    expected = {
        "files_with_matches": "Found 1 file\ndocs/a.md",
        "count": "docs/a.md:1\n[1 matching lines in 1 files]",
        "content": "docs/a.md:1:TODO docs",
    }
    assert found.text == expected[mode]
    (walk,) = _walks(calls)
    assert "/proc/self/fd/" not in walk
    flags = {"files_with_matches": {"-l"}, "count": {"-c"}, "content": {"-n"}}[mode]
    assert set(walk.split(" -- ")[0].split()) & {"-l", "-c", "-n"} == flags


def test_a_numbering_walk_past_its_output_cap_counts_and_numbers_only_the_files_shown(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past GREP_NUMBERED_WALK_MAX_BYTES of `-n` output (20k generated files print 17 MB) the
    walk is stopped; a `-c` walk counts, and rg numbers the files shown, named by their jailed
    descriptors. Both ways give the same answer."""
    arguments = {"pattern": "TODO", "output_mode": "content", "-i": True}
    one_walk = Toolbox(repo).run("Grep", arguments).text
    calls, wrapper = _wrapped_rg(tmp_path)
    monkeypatch.setattr("live_memory.config.constants.GREP_NUMBERED_WALK_MAX_BYTES", 1)
    monkeypatch.setattr("live_memory.tools.toolbox.find_ripgrep", lambda: str(wrapper))
    assert Toolbox(repo).run("Grep", arguments).text == one_walk
    numbered, counted, *_, shown = _walks(calls)  # (between: keys/ searched again, redacted)
    assert "-n" in numbered.split(" -- ")[0].split()
    assert counted.split()[0] == "-c"  # (which wins over `-n`)
    assert "/proc/self/fd/" not in numbered + counted
    assert len(re.findall(r" /proc/self/fd/\d+", shown)) == len(_paths(one_walk)) == 5


def test_names_that_look_like_rg_records_or_separators_are_parsed_as_names(
    tmp_path: Path,
) -> None:
    """rg's `--null` output is cut in bulk: a name holding blank lines or `N:count` shapes, and
    the last file, each keep their own counts and (numbered by descriptor) line numbers."""
    names = ["a\n\n3:b.txt", "12:\n", "z.txt", "sub/\n7:x.txt"]
    root = write_tree(tmp_path / "odd", {name: "TODO\nno\nTODO two\n" for name in names})
    toolbox = Toolbox(root)
    for mode, row in (("count", "{}:2"), ("content", "{0}:1:TODO\n{0}:3:TODO two")):
        text = toolbox.run("Grep", {"pattern": "TODO", "output_mode": mode}).text
        expected = "\n".join(row.format(name) for name in sorted(names))
        assert text.startswith(expected)
        assert text.removeprefix(expected) in ("", "\n[8 matching lines in 4 files]")


@pytest.mark.parametrize("cap", [None, 1])
def test_the_files_shown_are_numbered_in_batches_and_one_gone_since_the_walk_makes_room(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cap: int | None
) -> None:
    """More files shown than GREP_OPEN_FILES_MAX: opened (and, after a `-c` walk, numbered)
    in batches (one rg run each, at most that many descriptors), in path order; a file removed
    since the walk is skipped and the next file fills its place, while the walk's count stays."""
    count = GREP_OPEN_FILES_MAX + 10
    names = [f"f{n:04d}.txt" for n in range(count)]
    root = write_tree(tmp_path / "many", {name: f"x\nTODO {name}\n" for name in names})
    calls, wrapper = _wrapped_rg(tmp_path, after=f"rm -f {root}/f0000.txt")
    if cap is not None:
        monkeypatch.setattr("live_memory.config.constants.GREP_NUMBERED_WALK_MAX_BYTES", cap)
    monkeypatch.setattr("live_memory.tools.toolbox.find_ripgrep", lambda: str(wrapper))
    arguments = {"pattern": "TODO", "output_mode": "content", "head_limit": count - 1}
    text = Toolbox(root).run("Grep", arguments).text
    shown = "\n".join(f"{name}:2:TODO {name}" for name in names[1:])
    more = f"[showing {count - 1} of {count} matching lines; narrow the search or raise head_limit]"
    assert text == f"{shown}\n{more}"
    walk, *numbering = _walks(calls)
    assert "/proc/self/fd/" not in walk
    if cap is not None:  # the stopped `-n` walk, the `-c` walk, then the numbering runs
        first = GREP_OPEN_FILES_MAX - 1  # of the first batch's files, f0000 is gone
        assert [call.count("/proc/self/fd/") for call in numbering] == [0, first, 10]
    else:
        assert numbering == []


@pytest.mark.parametrize("cap", [None, 1])
def test_content_mode_numbers_short_lines_and_drops_a_binary_file_as_count_mode_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cap: int | None
) -> None:
    """An empty matching line, a last line of one byte without a newline (rg prints those
    in full), and a file with a NUL after a match (rg stops there with a warning record; the
    `-c` walk leaves the file out, and so does content mode)."""
    root = write_tree(tmp_path / "short", {"a.txt": "T\n\nx\nT", "b.txt": "T\n"})
    (root / "c.bin").write_bytes(b"T\n" + b"x" * 70_000 + b"\nT\0\n")
    if cap is not None:
        monkeypatch.setattr("live_memory.config.constants.GREP_NUMBERED_WALK_MAX_BYTES", cap)
    toolbox = Toolbox(root)
    arguments = {"pattern": "^T?$", "output_mode": "content", "-i": False}
    assert toolbox.run("Grep", arguments).text == "a.txt:1:T\na.txt:2:\na.txt:4:T\nb.txt:1:T"
    counted = toolbox.run("Grep", {**arguments, "output_mode": "count"}).text
    assert counted == "a.txt:3\nb.txt:1\n[4 matching lines in 2 files]"


@pytest.mark.parametrize("mode", ["count", "content"])
def test_an_rg_that_never_finishes_is_killed_at_the_deadline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    """rg's output (a memfd, or content mode's pipe) is awaited until the deadline only."""
    fifo = tmp_path / "never"
    os.mkfifo(fifo)
    wrapper = tmp_path / "rg"
    wrapper.write_text(f"#!/bin/sh\nexec cat {fifo}\n", encoding="utf-8")  # no writer comes
    wrapper.chmod(0o755)
    root = write_tree(tmp_path / "plain", {"a.txt": "TODO\n"})
    monkeypatch.setattr("live_memory.config.constants.TOOL_SUBPROCESS_TIMEOUT_S", 1.0)
    monkeypatch.setattr("live_memory.tools.toolbox.find_ripgrep", lambda: str(wrapper))
    outcome = Toolbox(root).run("Grep", {"pattern": "TODO", "output_mode": mode})
    assert outcome.is_error
    assert "ran out of time" in outcome.text
