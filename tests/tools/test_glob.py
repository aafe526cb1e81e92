from __future__ import annotations

import time
from pathlib import Path

import pytest

from live_memory.tools import Toolbox


def test_glob_without_a_slash_matches_names_at_any_depth(toolbox: Toolbox) -> None:
    assert toolbox.run("Glob", {"pattern": "*.py"}).text.split("\n") == [
        "src/app.py",
        "src/config.py",
        "src/util/strings.py",
    ]


def test_glob_with_a_slash_is_anchored_at_the_search_directory(toolbox: Toolbox) -> None:
    assert toolbox.run("Glob", {"pattern": "src/*.py"}).text.split("\n") == [
        "src/app.py",
        "src/config.py",
    ]
    assert (
        toolbox.run("Glob", {"pattern": "*.py", "path": "src/util"}).text == "src/util/strings.py"
    )


def test_glob_supports_double_star_and_braces(toolbox: Toolbox) -> None:
    assert toolbox.run("Glob", {"pattern": "**/*.{md,txt}", "path": "docs"}).text.split("\n") == [
        "docs/bom.txt",
        "docs/guide.md",
        "docs/windows.txt",
    ]


def test_glob_hides_ignored_and_secret_files(toolbox: Toolbox) -> None:
    text = toolbox.run("Glob", {"pattern": "**"}).text
    for hidden in (
        ".env",
        "server.pem",
        "debug.log",
        "build/out.txt",
        "generated_parser.py",
        ".git/",
    ):
        assert hidden not in text
    assert "keep.log" in text  # re-included by a negated .gitignore line


def test_glob_limit_truncates_with_a_notice(toolbox: Toolbox) -> None:
    outcome = toolbox.run("Glob", {"pattern": "**", "limit": 2})
    lines = outcome.text.split("\n")
    assert len(lines) == 3
    assert lines[2].startswith("[showing 2 of ")


def test_glob_accepts_an_absolute_pattern_inside_the_root(toolbox: Toolbox) -> None:
    outcome = toolbox.run("Glob", {"pattern": f"{toolbox.root}/src/*.py"})
    assert outcome.text.split("\n") == ["src/app.py", "src/config.py"]


def test_glob_with_no_match_explains_the_syntax(toolbox: Toolbox) -> None:
    outcome = toolbox.run("Glob", {"pattern": "*.rs"})
    assert not outcome.is_error
    assert outcome.text.startswith("No files match '*.rs'")


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        ({}, "missing required argument 'pattern'"),
        ({"pattern": "../*"}, "must not contain '..'"),
        ({"pattern": "/etc/*"}, "outside the workspace"),
        ({"pattern": "*", "path": "../outside"}, "outside the workspace"),
        ({"pattern": "*", "path": "README.md"}, "is not a directory"),
        ({"pattern": "*", "path": "nope"}, "does not exist"),
        ({"pattern": "*", "limit": "x"}, "must be an integer"),
    ],
)
def test_glob_bad_arguments_are_error_results(
    toolbox: Toolbox, arguments: dict[str, object], words: str
) -> None:
    outcome = toolbox.run("Glob", arguments)
    assert outcome.is_error
    assert words in outcome.text


def test_glob_lists_the_same_files_outside_git(shared_plain: Path, toolbox: Toolbox) -> None:
    plain = Toolbox(shared_plain).run("Glob", {"pattern": "**"}).text.split("\n")
    in_git = toolbox.run("Glob", {"pattern": "**"}).text.split("\n")
    assert plain == in_git


def test_adversarial_globs_answer_quickly_through_the_tools(toolbox: Toolbox) -> None:
    # With the old translation `'**/' * 40` against a deep path ran for ages holding the GIL.
    deep = "/".join(["d"] * 30)
    for pattern in ("**/" * 40 + "nomatch", f"{deep}/**/" + "*a" * 40 + "b"):
        started = time.process_time()
        assert toolbox.run("Glob", {"pattern": pattern}).text.startswith("No files match")
        outcome = toolbox.run("Grep", {"pattern": "TODO", "glob": pattern})
        assert not outcome.is_error
        assert time.process_time() - started < 5.0
    refused = toolbox.run("Glob", {"pattern": "{a,b}" * 9})
    assert refused.is_error
    assert "alternatives" in refused.text
