from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from live_memory.providers.types import ToolSpec
from live_memory.tools import TOOL_NAMES, Toolbox


def test_specs_are_anthropic_native_and_never_change() -> None:
    specs = Toolbox.specs()
    assert specs is Toolbox.specs()
    assert [spec.name for spec in specs] == [
        "Read",
        "Grep",
        "Glob",
        "find_paths",
        "get_changed_files",
        "git_search",
        "find_symbol",
        "outline",
    ]
    for spec in specs:
        assert isinstance(spec, ToolSpec)
        assert spec.description
        assert spec.input_schema["type"] == "object"
        json.dumps(spec.input_schema)  # the OpenAI adapter serialises them


def test_spec_parameters_match_the_design() -> None:
    properties = {spec.name: set(_properties(spec)) for spec in Toolbox.specs()}
    assert properties == {
        "Read": {"file_path", "offset", "limit"},
        "Grep": {"pattern", "path", "glob", "output_mode", "-i", "head_limit"},
        "Glob": {"pattern", "path", "limit"},
        "find_paths": {"path", "name", "type", "max_depth", "limit"},
        "get_changed_files": set(),
        "git_search": {"query", "path", "limit", "patch"},
        "find_symbol": {"name", "kind", "limit"},
        "outline": {"path"},
    }


def _properties(spec: ToolSpec) -> dict[str, Any]:
    properties = spec.input_schema["properties"]
    assert isinstance(properties, dict)
    return properties


def test_unknown_tool_is_an_error_result_listing_the_tools(toolbox: Toolbox) -> None:
    outcome = toolbox.run("Bash", {"command": "rm -rf /"})
    assert outcome.is_error
    assert outcome.text == f"Unknown tool 'Bash'. Available tools: {', '.join(TOOL_NAMES)}."


def test_tool_names_are_matched_case_insensitively(toolbox: Toolbox) -> None:
    assert not toolbox.run("read", {"file_path": "README.md"}).is_error


def test_arguments_that_are_not_an_object_are_an_error_result(toolbox: Toolbox) -> None:
    outcome = toolbox.run("Read", ["README.md"])  # type: ignore[arg-type]
    assert outcome.is_error
    assert "arguments must be a JSON object" in outcome.text
    assert toolbox.run("get_changed_files", None).is_error is False  # type: ignore[arg-type]


def test_non_string_tool_name_is_an_error_result(toolbox: Toolbox) -> None:
    assert toolbox.run(42, {}).is_error  # type: ignore[arg-type]


def test_output_is_capped_with_a_visible_notice(shared_git: Path) -> None:
    toolbox = Toolbox(shared_git, max_output_chars=300)
    outcome = toolbox.run("Read", {"file_path": "long/line.txt"})
    assert len(outcome.text) <= 300
    assert "[output truncated: showing" in outcome.text
    assert "narrow the request" in outcome.text
    assert [read.path for read in outcome.reads] == ["long/line.txt"]


def test_only_read_reports_file_reads(toolbox: Toolbox) -> None:
    assert toolbox.run("Grep", {"pattern": "todo", "output_mode": "content"}).reads == ()
    assert toolbox.run("Glob", {"pattern": "*.py"}).reads == ()
    assert [r.path for r in toolbox.run("Read", {"file_path": "link_in.md"}).reads] == ["README.md"]


def test_a_toolbox_serves_several_threads_at_once(toolbox: Toolbox) -> None:
    calls: list[tuple[str, dict[str, object]]] = [
        ("Read", {"file_path": "src/app.py"}),
        ("Grep", {"pattern": "todo", "output_mode": "content"}),
        ("Glob", {"pattern": "**/*.md"}),
        ("find_paths", {"max_depth": 2}),
        ("Read", {"file_path": "../escape"}),
        ("git_search", {"limit": 1}),
    ] * 4
    expected = [toolbox.run(name, args) for name, args in calls]
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda call: toolbox.run(*call), calls))
    assert results == expected


def test_toolbox_resolves_its_root(tmp_path: Path, shared_git: Path) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(shared_git)
    assert Toolbox(alias).root == shared_git.resolve()


def test_grep_output_is_capped_too(shared_git: Path) -> None:
    outcome = Toolbox(shared_git, max_output_chars=120).run(
        "Grep", {"pattern": "todo", "output_mode": "content"}
    )
    assert len(outcome.text) <= 120
    assert outcome.text.endswith("head_limit)]")


def test_tools_on_a_missing_root_fail_with_a_message(tmp_path: Path) -> None:
    toolbox = Toolbox(tmp_path / "gone")
    for name, arguments in [
        ("Glob", {"pattern": "*"}),
        ("Read", {"file_path": "a"}),
        ("Grep", {"pattern": "a"}),
        ("find_paths", {}),
    ]:
        outcome = toolbox.run(name, arguments)
        assert outcome.is_error, name
        assert "does not exist" in outcome.text, (name, outcome.text)
