from __future__ import annotations

import hashlib
from pathlib import Path

from live_memory.config.constants import READ_MAX_LINE_CHARS, SECRET_REDACTION
from live_memory.tools import Toolbox
from tests.tools.conftest import AWS_KEY


def test_read_numbers_lines_like_cat_n_and_records_the_read(toolbox: Toolbox) -> None:
    outcome = toolbox.run("Read", {"file_path": "src/app.py"})
    assert not outcome.is_error
    lines = outcome.text.split("\n")
    assert lines[0] == "     1\timport os"
    assert lines[2] == "     3\tdef handler(event):"
    raw = (toolbox.root / "src/app.py").read_bytes()
    assert [(r.path, r.sha256, r.size) for r in outcome.reads] == [
        ("src/app.py", hashlib.sha256(raw).hexdigest(), len(raw))
    ]


def test_read_offset_and_limit_select_a_range_and_say_how_to_continue(toolbox: Toolbox) -> None:
    outcome = toolbox.run("Read", {"file_path": "src/app.py", "offset": 3, "limit": 2})
    assert outcome.text.split("\n")[:2] == [
        "     3\tdef handler(event):",
        "     4\t    # TODO: validate event",
    ]
    assert "lines 3-4 of 8; continue with offset=5" in outcome.text


def test_read_accepts_string_numbers_and_the_legacy_path_alias(toolbox: Toolbox) -> None:
    outcome = toolbox.run("Read", {"path": "src/app.py", "offset": "7", "limit": "1"})
    assert outcome.text.startswith("     7\tdef process(value):")


def test_read_offset_past_the_end_explains_and_records_nothing(toolbox: Toolbox) -> None:
    outcome = toolbox.run("Read", {"file_path": "src/app.py", "offset": 99})
    assert "has 8 lines" in outcome.text
    assert outcome.reads == ()


def test_read_of_an_empty_file_says_so(toolbox: Toolbox) -> None:
    outcome = toolbox.run("Read", {"file_path": "notes/empty.txt"})
    assert outcome.text == "(notes/empty.txt is empty)"
    assert len(outcome.reads) == 1


def test_read_cuts_long_lines(toolbox: Toolbox) -> None:
    outcome = toolbox.run("Read", {"file_path": "long/line.txt"})
    assert "line cut" in outcome.text
    assert len(outcome.text.split("\n")[0]) < READ_MAX_LINE_CHARS + 100


def test_read_strips_carriage_returns_from_display(toolbox: Toolbox) -> None:
    assert "\r" not in toolbox.run("Read", {"file_path": "docs/windows.txt"}).text


def test_read_redacts_secret_values(toolbox: Toolbox) -> None:
    outcome = toolbox.run("Read", {"file_path": "src/config.py"})
    assert AWS_KEY not in outcome.text
    assert SECRET_REDACTION in outcome.text


def test_read_refuses_secret_files_as_an_error_result(toolbox: Toolbox) -> None:
    for path in (".env", "deploy/server.pem", "env_link.txt"):
        outcome = toolbox.run("Read", {"file_path": path})
        assert outcome.is_error
        assert "secret" in outcome.text
        assert "hunter2" not in outcome.text and outcome.reads == ()


def test_read_refuses_symlink_that_leaves_the_root(toolbox: Toolbox) -> None:
    outcome = toolbox.run("Read", {"file_path": "link_out.txt"})
    assert outcome.is_error
    assert "outside the workspace" in outcome.text
    assert "TODO outside" not in outcome.text


def test_read_refuses_fifo_binary_directory_and_missing_files(toolbox: Toolbox) -> None:
    expectations = {
        "pipe.txt": "FIFO",
        "assets/logo.bin": "binary",
        "src": "directory",
        "src/missing.py": "does not exist",
        "../outside/secret.txt": "outside the workspace",
    }
    for path, words in expectations.items():
        outcome = toolbox.run("Read", {"file_path": path})
        assert outcome.is_error, path
        assert words in outcome.text, (path, outcome.text)


def test_read_with_bad_arguments_is_an_error_result(toolbox: Toolbox) -> None:
    cases = [
        ({}, "missing required argument 'file_path'"),
        ({"file_path": ""}, "must not be empty"),
        ({"file_path": ["a"]}, "must be a string"),
        ({"file_path": "src/app.py", "offset": "three"}, "must be an integer"),
        ({"file_path": "src/app.py", "limit": True}, "must be an integer"),
        ({"file_path": "src/app.py\x00"}, "NUL"),
    ]
    for arguments, words in cases:
        outcome = toolbox.run("Read", arguments)
        assert outcome.is_error, arguments
        assert words in outcome.text, (arguments, outcome.text)


def test_read_outside_the_monitored_globs_is_refused(shared_git: Path) -> None:
    toolbox = Toolbox(shared_git, file_globs=("docs/*",))
    assert not toolbox.run("Read", {"file_path": "docs/guide.md"}).is_error
    refused = toolbox.run("Read", {"file_path": "src/app.py"})
    assert refused.is_error
    assert "monitored" in refused.text
