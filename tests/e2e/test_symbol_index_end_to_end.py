"""The structural index over MCP: a new workspace the index covers starts grounded (its first
question costs one model call, no forced re-ask; the core map is in the stable prefix), a
definition it names comes with path:line, and a docs-only workspace stays cold."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cli.conftest import clean_env, cli
from tests.e2e.conftest import ensure_workspace, provider_env
from tests.support.app_server import AppServer
from tests.support.fakes import FakeProvider, Text, ToolUse
from tests.support.mcp_client import call_tool
from tests.support.repo import make_repo

pytestmark = pytest.mark.e2e

FILES = {
    "src/app.py": "from util.strings import shout\n\ndef answer():\n    return shout('x')\n",
    "src/util/strings.py": (
        'def shout(text):\n    """Upper-case the text."""\n    return text.upper()\n'
    ),
    "web/api.ts": "export function fetchUser(id: string): Promise<string> { return get(id); }\n",
    "README.md": "# demo\n",
}


def _until(
    server: AppServer,
    repo: Path,
    condition: Callable[[dict[str, object]], bool],
    timeout_s: float = 60.0,
) -> dict[str, object]:
    """Poll /stats until the index's coverage meets `condition` (the condition, not a sleep)."""
    deadline = time.monotonic() + timeout_s
    while True:
        stats = server.request("GET", "/stats", params={"cwd": str(repo)}).json()
        index = stats["symbol_index"]
        if index and condition(index):
            return dict(index)
        assert time.monotonic() < deadline, stats
        time.sleep(0.05)


def _index_complete(server: AppServer, repo: Path) -> dict[str, object]:
    return _until(server, repo, lambda index: bool(index["complete"]))


def test_an_indexed_workspace_starts_grounded_and_a_docs_only_one_stays_cold(
    fake: FakeProvider, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    docs = make_repo(tmp_path / "docs", {"README.md": "# notes\n", "docs/guide.md": "# Guide\n"})
    with AppServer(tmp_path / "data", provider_env(fake, "anthropic")) as server:
        ensure_workspace(server.url, repo)
        coverage = _index_complete(server, repo)
        assert coverage["files_indexed"] == coverage["files_total"] == 3
        assert coverage["languages"] == {"python": 2, "typescript": 1}

        # Nothing held yet, and the question names no symbol: the core map of the whole
        # workspace (in the stable prefix) grounds it, so ONE model call, no forced re-ask.
        fake.script(Text("app.py calls shout from src/util/strings.py:1."))
        is_error, text = call_tool(
            server.url,
            "ask_live_memory",
            {"question": "How do the pieces fit?", "cwd": str(repo)},
        )
        assert not is_error, text
        assert text.startswith("app.py calls shout from src/util/strings.py:1.")
        assert "tool_calls=0" in text
        assert len(fake.requests) == 1
        system = json.dumps(fake.requests[0].body["system"])
        assert "## Core map of the code" in system
        assert "src/util/strings.py:1 [function] shout: def shout(text)" in system
        tools = {t["name"] for t in fake.requests[0].body["tools"]}
        assert {"find_symbol", "outline"} <= tools

        # A definition the core map leaves out comes as the question's retrieval delta, and
        # find_symbol works as a model tool.
        fake.script(
            ToolUse("find_symbol", {"name": "fetchUser"}), Text("fetchUser is in web/api.ts:1")
        )
        response = server.request(
            "POST", "/api/ask", json={"question": "Where is fetchUser defined?", "cwd": str(repo)}
        )
        assert response.status_code == 200, response.text
        assert response.json()["answer"] == "fetchUser is in web/api.ts:1"
        assert len(fake.requests) == 3
        assert "web/api.ts:1 [function] fetchUser" in json.dumps(fake.requests[1].body)
        tool_result = json.dumps(fake.requests[-1].body["messages"][-1])
        assert "web/api.ts:1 [function] fetchUser" in tool_result

        # A workspace the index does not cover (docs only: no core map) is still cold: the
        # ungrounded first answer is rejected once, then grounded by a tool.
        ensure_workspace(server.url, docs)
        assert _index_complete(server, docs)["files_indexed"] == 0
        fake.script(Text("guess"), ToolUse("Read", {"file_path": "README.md"}), Text("notes"))
        response = server.request(
            "POST", "/api/ask", json={"question": "What is this?", "cwd": str(docs)}
        )
        assert response.status_code == 200, response.text
        assert response.json()["answer"] == "notes"
        assert len(fake.requests) == 6
        assert "Core map" not in json.dumps(fake.requests[3].body["system"])

        # Teed content (/notify) updates the index incrementally: a new definition is found.
        grown = FILES["src/util/strings.py"] + "\n\ndef whisper(text):\n    return text.lower()\n"
        (repo / "src/util/strings.py").write_text(grown)
        before = int(str(coverage["definitions"]))
        server.request(
            "POST",
            "/notify",
            json={
                "cwd": str(repo),
                "events": [{"path": "src/util/strings.py", "kind": "write", "content": grown}],
            },
        ).raise_for_status()
        _until(server, repo, lambda index: int(str(index["definitions"])) == before + 1)
        fake.script(Text("whisper is at src/util/strings.py:6."))
        response = server.request(
            "POST", "/api/ask", json={"question": "Where is whisper defined?", "cwd": str(repo)}
        )
        assert response.status_code == 200, response.text
        assert len(fake.requests) == 7
        assert "src/util/strings.py:6 [function] whisper" in json.dumps(fake.requests[6].body)


def test_the_os_watcher_alone_keeps_the_index_current(fake: FakeProvider, tmp_path: Path) -> None:
    """Watcher mode, no hooks and no /notify: files edited, added and removed on disk reach the
    index through the OS watcher, and the model's find_symbol / outline see the new code."""
    repo = make_repo(tmp_path / "repo", FILES)
    env = provider_env(fake, "anthropic") | {"LIVE_MEMORY_WATCHER": "os"}
    with AppServer(tmp_path / "data", env) as server:
        ensure_workspace(server.url, repo)
        coverage = _index_complete(server, repo)
        assert coverage["files_total"] == 3
        (repo / "web/api.ts").write_text(
            "export function fetchUser(id: string): Promise<string> { return get(id); }\n"
            "\n"
            "export function deleteUser(id: string): Promise<void> { return del(id); }\n"
        )
        (repo / "src/util/strings.py").write_text("\n\ndef yell(text):\n    return text.upper()\n")
        (repo / "src/extra.py").write_text("class Registry:\n    def register(self): pass\n")
        _until(
            server,
            repo,
            lambda index: index["files_indexed"] == 4 and index["definitions"] == 6,
        )
        fake.script(
            ToolUse("find_symbol", {"name": "deleteUser"}),
            ToolUse("outline", {"path": "web/api.ts"}),
            ToolUse("find_symbol", {"name": "shout"}),
            ToolUse("find_symbol", {"name": "register"}),
            ToolUse("outline", {"path": "src/util/strings.py"}),
            Text("deleteUser is at web/api.ts:3."),
        )
        response = server.request(
            "POST", "/api/ask", json={"question": "What changed in the API?", "cwd": str(repo)}
        )
        assert response.status_code == 200, response.text
    results = [json.dumps(r.body["messages"][-1]) for r in fake.requests[1:6]]
    assert "web/api.ts:3 [function] deleteUser" in results[0]
    assert "3 [function] deleteUser" in results[1] and "1 [function] fetchUser" in results[1]
    assert "shout" in results[2] and "src/util/strings.py" not in results[2]  # renamed away
    assert "src/extra.py:2 [method] Registry.register" in results[3]
    assert "3 [function] yell" in results[4] and "shout" not in results[4]


def test_empty_deletes_the_workspace_index_and_the_next_question_rebuilds_it(
    fake: FakeProvider, tmp_path: Path
) -> None:
    # `empty` wiped the memory but left the index database (20-33 MB) in data/index/.
    repo = make_repo(tmp_path / "repo", FILES)
    name = hashlib.sha256(str(repo.resolve()).encode()).hexdigest()[:16]
    data = tmp_path / "data"
    fake.responder = lambda recorded: Text("answered")
    with AppServer(data, provider_env(fake, "anthropic")) as server:
        ensure_workspace(server.url, repo)
        assert _index_complete(server, repo)["files_indexed"] == 3
        assert list((data / "index").glob(f"{name}.sqlite3*"))
        env = clean_env(data / "home")
        emptied = cli(["empty", "--cwd", str(repo), "--server", server.url], env)
        assert emptied.code == 0, emptied.err
        assert list((data / "index").glob(f"{name}*")) == []
        assert (
            server.request("GET", "/stats", params={"cwd": str(repo)}).json()["symbol_index"]
            is None
        )
        is_error, text = call_tool(
            server.url, "ask_live_memory", {"question": "Where is shout?", "cwd": str(repo)}
        )
        assert not is_error and text.startswith("answered"), text
        assert _index_complete(server, repo)["files_indexed"] == 3  # rebuilt
        assert (data / "index" / f"{name}.sqlite3").exists()
