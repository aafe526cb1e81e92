from __future__ import annotations

import pytest

from live_memory.tools import Toolbox


def test_find_paths_lists_directories_with_counts_and_files_to_the_depth(toolbox: Toolbox) -> None:
    outcome = toolbox.run("find_paths", {"path": "src", "max_depth": 1})
    assert outcome.text.split("\n") == ["src/app.py", "src/config.py", "src/util/ (2 files)"]


def test_find_paths_filters_directories_only(toolbox: Toolbox) -> None:
    outcome = toolbox.run("find_paths", {"type": "d", "max_depth": 2})
    assert outcome.text.split("\n") == [
        "assets/ (1 file)",
        "docs/ (3 files)",
        "long/ (1 file)",
        "notes/ (1 file)",
        "src/ (4 files)",
        "src/util/ (2 files)",
    ]


def test_find_paths_name_is_a_case_insensitive_glob_on_the_last_part(toolbox: Toolbox) -> None:
    assert toolbox.run("find_paths", {"name": "readme*"}).text == "README.md"
    assert toolbox.run("find_paths", {"name": "*.TXT", "type": "f"}).text.split("\n") == [
        "docs/bom.txt",
        "docs/windows.txt",
        "env_link.txt",
        "link_out.txt",
        "long/line.txt",
        "notes/empty.txt",
    ]


def test_find_paths_never_lists_secret_or_ignored_files(toolbox: Toolbox) -> None:
    text = toolbox.run("find_paths", {"max_depth": 10, "limit": 500}).text
    for hidden in (".env", "server.pem", "debug.log", "build/", ".git/", "generated_parser"):
        assert hidden not in text


def test_find_paths_limit_truncates_with_a_notice(toolbox: Toolbox) -> None:
    lines = toolbox.run("find_paths", {"limit": 3}).text.split("\n")
    assert len(lines) == 4
    assert lines[3].startswith("[showing 3 of ")


def test_find_paths_reports_an_empty_result(toolbox: Toolbox) -> None:
    outcome = toolbox.run("find_paths", {"name": "*.rs"})
    assert not outcome.is_error
    assert outcome.text.startswith("No entries found in the workspace named '*.rs'")


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        ({"type": "x"}, "type must be 'f'"),
        ({"max_depth": "deep"}, "must be an integer"),
        ({"path": "../.."}, "outside the workspace"),
        ({"path": "README.md"}, "is not a directory"),
    ],
)
def test_find_paths_bad_arguments_are_error_results(
    toolbox: Toolbox, arguments: dict[str, object], words: str
) -> None:
    outcome = toolbox.run("find_paths", arguments)
    assert outcome.is_error
    assert words in outcome.text
