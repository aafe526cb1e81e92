from __future__ import annotations

from pathlib import Path

import pytest

from live_memory.config.constants import SECRET_REDACTION
from live_memory.tools import Toolbox
from tests.tools.conftest import AWS_KEY

VISIBLE_TODO_FILES = [
    "README.md",
    "docs/bom.txt",
    "docs/guide.md",
    "docs/windows.txt",
    "keep.log",  # (link_in.md matches too, but Grep, like ripgrep, does not follow links)
    "long/line.txt",
    "src/app.py",
    "src/config.py",
    "src/util/strings.py",
]


@pytest.fixture(params=["ripgrep", "python"])
def engine(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _toolbox(root: Path, engine: str) -> Toolbox:
    toolbox = Toolbox(root, use_ripgrep=engine == "ripgrep")
    assert toolbox.grep_engine == engine
    return toolbox


def _paths(text: str) -> list[str]:
    return [line for line in text.split("\n") if line and not line.startswith(("Found", "["))]


def test_grep_lists_matching_files_case_insensitively_by_default(
    shared_git: Path, engine: str
) -> None:
    outcome = _toolbox(shared_git, engine).run("Grep", {"pattern": "todo"})
    assert not outcome.is_error
    assert outcome.text.startswith(f"Found {len(VISIBLE_TODO_FILES)} files\n")
    assert _paths(outcome.text) == VISIBLE_TODO_FILES
    assert outcome.reads == ()


def test_grep_honours_gitignore_outside_git_too(shared_plain: Path, engine: str) -> None:
    outcome = _toolbox(shared_plain, engine).run("Grep", {"pattern": "todo"})
    assert _paths(outcome.text) == VISIBLE_TODO_FILES


def test_grep_never_shows_secret_ignored_binary_or_outside_files(
    shared_git: Path, engine: str
) -> None:
    text = (
        _toolbox(shared_git, engine).run("Grep", {"pattern": "TODO", "output_mode": "content"}).text
    )
    for hidden in (
        ".env",
        "server.pem",
        "env_link",
        "link_out",
        "debug.log",
        "build/",
        "generated_",
        "logo.bin",
        "pipe.txt",
        "hunter2",
        "outside the root",
    ):
        assert hidden not in text


def test_grep_is_case_sensitive_when_asked(shared_git: Path, engine: str) -> None:
    outcome = _toolbox(shared_git, engine).run("Grep", {"pattern": "todo", "-i": False})
    assert _paths(outcome.text) == ["src/app.py"]


def test_grep_content_mode_shows_path_line_and_redacted_text(shared_git: Path, engine: str) -> None:
    outcome = _toolbox(shared_git, engine).run(
        "Grep", {"pattern": "api_key|TODO: turn", "output_mode": "content", "path": "src"}
    )
    assert outcome.text.split("\n") == [
        f'src/config.py:1:API_KEY = "{SECRET_REDACTION}"',
        "src/config.py:2:DEBUG = True  # TODO: turn off",
    ]
    assert AWS_KEY not in outcome.text
    assert outcome.reads == ()  # content mode is not a read


def test_grep_content_mode_strips_carriage_returns_and_cuts_long_lines(
    shared_git: Path, engine: str
) -> None:
    toolbox = _toolbox(shared_git, engine)
    crlf = toolbox.run("Grep", {"pattern": "line one", "output_mode": "content"}).text
    assert crlf == "docs/windows.txt:1:line one TODO"
    long = toolbox.run("Grep", {"pattern": "x TODO", "output_mode": "content"}).text
    assert long.startswith("long/line.txt:1:xxx") and long.endswith("[line cut]")


def test_grep_count_mode_counts_matching_lines_per_file(shared_git: Path, engine: str) -> None:
    outcome = _toolbox(shared_git, engine).run(
        "Grep", {"pattern": "todo", "output_mode": "count", "path": "src"}
    )
    assert outcome.text.split("\n") == [
        "src/app.py:2",
        "src/config.py:1",
        "src/util/strings.py:1",
        "[4 matching lines in 3 files]",
    ]


def test_grep_head_limit_truncates_with_a_notice(shared_git: Path, engine: str) -> None:
    outcome = _toolbox(shared_git, engine).run("Grep", {"pattern": "todo", "head_limit": 3})
    assert _paths(outcome.text) == VISIBLE_TODO_FILES[:3]
    assert f"[showing 3 of {len(VISIBLE_TODO_FILES)} files" in outcome.text


def test_grep_glob_includes_and_excludes(shared_git: Path, engine: str) -> None:
    toolbox = _toolbox(shared_git, engine)
    # As with `rg --glob`, a glob naming files matches an ignored file too (the best-effort
    # fallback searches the listing, which leaves it out); an ignored directory stays out.
    ignored = ["src/util/generated_parser.py"] if engine == "ripgrep" else []
    assert _paths(toolbox.run("Grep", {"pattern": "todo", "glob": "*.py"}).text) == [
        "src/app.py",
        "src/config.py",
        *ignored,
        "src/util/strings.py",
    ]
    assert "build/" not in toolbox.run("Grep", {"pattern": "todo", "glob": "*.txt"}).text
    excluded = _paths(toolbox.run("Grep", {"pattern": "todo", "glob": "!*.{md,txt,log}"}).text)
    assert excluded == ["src/app.py", "src/config.py", "src/util/strings.py"]


def test_grep_accepts_legacy_argument_names(shared_git: Path, engine: str) -> None:
    outcome = _toolbox(shared_git, engine).run(
        "Grep", {"regex": "todo", "file_pattern": "*.md", "max_results": 1}
    )
    assert _paths(outcome.text) == ["README.md"]


def test_grep_searches_one_file_when_path_is_a_file(shared_git: Path, engine: str) -> None:
    toolbox = _toolbox(shared_git, engine)
    outcome = toolbox.run(
        "Grep", {"pattern": "todo", "path": "docs/guide.md", "output_mode": "content"}
    )
    assert outcome.text.split("\n") == [
        "docs/guide.md:3:See TODO list.",
        "docs/guide.md:4:café TODO ünïcode",
    ]
    ignored = toolbox.run("Grep", {"pattern": "todo", "path": "debug.log"})  # named explicitly
    assert _paths(ignored.text) == ["debug.log"]
    for mode in ("files_with_matches", "count", "content"):  # a binary file, named: not searched
        named = {"pattern": "todo", "path": "assets/logo.bin", "output_mode": mode}
        assert toolbox.run("Grep", named).text.startswith("No matches for 'todo'"), mode


def test_grep_refuses_secret_outside_and_missing_paths(shared_git: Path, engine: str) -> None:
    toolbox = _toolbox(shared_git, engine)
    cases = {
        ".env": "secret",
        "env_link.txt": "secret",
        "../outside": "outside the workspace",
        "nope": "does not exist",
        "pipe.txt": "not a regular file",
    }
    for path, words in cases.items():
        outcome = toolbox.run("Grep", {"pattern": "x", "path": path})
        assert outcome.is_error, path
        assert words in outcome.text, (path, outcome.text)


def test_grep_with_no_match_says_so(shared_git: Path, engine: str) -> None:
    outcome = _toolbox(shared_git, engine).run("Grep", {"pattern": "zzz_not_here"})
    assert not outcome.is_error
    assert outcome.text == "No matches for 'zzz_not_here' (case-insensitive) in the workspace."


def test_grep_rejects_bad_patterns_and_arguments(shared_git: Path, engine: str) -> None:
    toolbox = _toolbox(shared_git, engine)
    cases = [
        ({"pattern": "foo("}, "invalid regex"),
        ({"pattern": "a\\nb"}, "one line"),
        ({"pattern": "a\nb"}, "one line"),
        ({}, "missing required argument 'pattern'"),
        ({"pattern": "x", "output_mode": "lines"}, "must be one of"),
        ({"pattern": "x", "head_limit": "many"}, "must be an integer"),
        ({"pattern": "x", "-i": "maybe"}, "true or false"),
        ({"pattern": "x", "glob": "../*.py"}, "must not contain '..'"),
    ]
    for arguments, words in cases:
        outcome = toolbox.run("Grep", arguments)
        assert outcome.is_error, arguments
        assert words in outcome.text, (arguments, outcome.text)


def test_grep_supports_lookaround_in_both_engines(shared_git: Path, engine: str) -> None:
    outcome = _toolbox(shared_git, engine).run(
        "Grep", {"pattern": "(?<=# )TODO(?=:)", "output_mode": "content", "-i": False}
    )
    assert outcome.text.split("\n") == [
        "src/app.py:4:    # TODO: validate event",
        "src/config.py:2:DEBUG = True  # TODO: turn off",
    ]


def test_grep_head_limit_equal_to_the_matches_shows_no_truncation(
    shared_git: Path, engine: str
) -> None:
    outcome = _toolbox(shared_git, engine).run(
        "Grep", {"pattern": "todo", "path": "src/app.py", "output_mode": "content", "head_limit": 2}
    )
    assert outcome.text.split("\n") == [
        "src/app.py:4:    # TODO: validate event",
        "src/app.py:8:    return value  # todo later",
    ]
