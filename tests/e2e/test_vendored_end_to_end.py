"""Vendored and generated directories (node_modules, .venv, dist, …) as the model meets them:
left out of the directory tree, find_paths, Glob, Grep and the index by default, even in a
repository with no .gitignore for them; listed with LIVE_MEMORY_INCLUDE_VENDORED=true."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.e2e.conftest import ensure_workspace, provider_env
from tests.support.app_server import AppServer
from tests.support.fakes import Call, FakeProvider, Text, ToolUse
from tests.support.mcp_client import call_tool
from tests.support.repo import make_repo

pytestmark = pytest.mark.e2e

FILES = {
    "src/app.py": "MARKER = 'own'\ndef answer():\n    return 42\n",
    "node_modules/pkg/index.js": "const MARKER = 'dependency';\nfunction dep() {}\n",
    ".venv/lib/site.py": "MARKER = 'venv'\ndef site():\n    pass\n",
    "venv/lib/other.py": "MARKER = 'venv2'\n",
    "__pycache__/app.cpython-312.txt": "MARKER cache\n",
    "dist/bundle.js": "var MARKER = 1;\n",
    "build/lib/app.py": "MARKER = 'built'\n",
    "target/debug/out.txt": "MARKER target\n",
    ".next/server.js": "MARKER next\n",
    ".tox/py/x.txt": "MARKER tox\n",
    ".mypy_cache/x.json": "MARKER\n",
    ".pytest_cache/v.txt": "MARKER\n",
    "docs/build": "a file called build is no directory: MARKER\n",
}
VENDORED = (
    "node_modules",
    ".venv",
    "venv/",
    "__pycache__",
    "dist/",
    "build/lib",
    "target/",
    ".next",
    ".tox",
    ".mypy_cache",
    ".pytest_cache",
)
TOOLS = ToolUse.several(
    Call("find_paths", {"max_depth": 8, "type": "f"}),
    Call("Glob", {"pattern": "**/*"}),
    Call("Grep", {"pattern": "MARKER", "output_mode": "files_with_matches"}),
)


def _results(body: dict[str, object]) -> list[str]:
    messages = body["messages"]
    assert isinstance(messages, list)
    return [
        json.dumps(block.get("content"))
        for block in messages[-1]["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]


def _index_total(server: AppServer, repo: Path) -> int:
    deadline = time.monotonic() + 60
    while True:  # the index's first pass reports completion through /stats
        index = server.request("GET", "/stats", params={"cwd": str(repo)}).json()["symbol_index"]
        if index and index["complete"]:
            return int(index["files_total"])
        assert time.monotonic() < deadline, index
        time.sleep(0.05)


def test_vendored_directories_are_left_out_of_tree_tools_and_index_without_a_gitignore(
    fake: FakeProvider, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", FILES)  # all of it committed, no .gitignore
    fake.script(TOOLS, Text("Only src/app.py is the project's own."))
    with AppServer(tmp_path / "data", provider_env(fake, "anthropic")) as server:
        is_error, text = call_tool(
            server.url, "ask_live_memory", {"question": "Where is MARKER set?", "cwd": str(repo)}
        )
        assert not is_error, text
        ensure_workspace(server.url, repo)
        indexed = _index_total(server, repo)
    tree = json.dumps(fake.requests[0].body["system"])
    assert "app.py" in tree
    results = _results(fake.requests[1].body)
    assert len(results) == 3
    for shown in [tree, *results]:
        assert not [name for name in VENDORED if name in shown], shown
    find_paths, glob, grep = results
    assert "src/app.py" in find_paths and "src/app.py" in glob and "src/app.py" in grep
    assert "docs/build" in glob and "docs/build" in grep
    assert indexed == 1  # src/app.py; not the .py files under .venv, venv or build


def test_include_vendored_lists_them_and_a_search_inside_one_looks_there_anyway(
    fake: FakeProvider, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    fake.script(
        ToolUse("Grep", {"pattern": "MARKER", "path": "node_modules/pkg"}),
        Text("The dependency sets it too."),
        TOOLS,
        Text("Everything is listed."),
    )
    with AppServer(tmp_path / "data", provider_env(fake, "anthropic")) as server:
        is_error, text = call_tool(
            server.url, "ask_live_memory", {"question": "And in pkg?", "cwd": str(repo)}
        )
        assert not is_error, text
    assert "node_modules/pkg/index.js" in _results(fake.requests[1].body)[0]

    env = {**provider_env(fake, "anthropic"), "LIVE_MEMORY_INCLUDE_VENDORED": "true"}
    with AppServer(tmp_path / "data2", env) as server:
        is_error, text = call_tool(
            server.url, "ask_live_memory", {"question": "Where is MARKER set?", "cwd": str(repo)}
        )
        assert not is_error, text
        ensure_workspace(server.url, repo)
        indexed = _index_total(server, repo)
    tree = json.dumps(fake.requests[2].body["system"])
    find_paths, glob, grep = _results(fake.requests[3].body)
    for shown in (tree, find_paths, glob, grep):
        assert "node_modules" in shown and ".venv" in shown and "dist" in shown, shown
    assert indexed == 7  # and the .py / .js files of .venv, venv, build, node_modules, dist, .next
