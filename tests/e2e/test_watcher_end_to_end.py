"""LIVE_MEMORY_WATCHER=os: edits made outside any agent reach the window without /notify."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import provider_env
from tests.support.app_server import AppServer, RunningServer
from tests.support.fakes import FakeProvider, Text, ToolUse
from tests.support.repo import git

pytestmark = pytest.mark.e2e

WITHIN_S = 2.0
RELEASED_S = 60.0  # a bound for a loaded machine, not a target: the watcher flushes in ~0.2 s


def _wait_for_stats(server: RunningServer, repo: Path, key: str, want: int) -> dict[str, Any]:
    deadline = time.monotonic() + WITHIN_S
    while True:
        stats = server.request("GET", "/stats", params={"cwd": str(repo)}).json()
        if stats["file_contexts"][key] >= want or time.monotonic() > deadline:
            return dict(stats)
        time.sleep(0.05)  # polling the server's view; there is no event to wait on


def _wait_until_released(server: RunningServer) -> None:
    """Nothing left in the watcher's debouncer. Each path is released when its own burst is
    over, so a checkout's files and its HEAD move (what marks the tree stale) may leave in
    separate flushes: on a loaded machine git took longer than the debounce between writing
    them, README's change was counted first, and the next question went out before HEAD's
    flush with the old tree."""
    deadline = time.monotonic() + RELEASED_S
    while server.request("GET", "/health").json()["watcher"]["pending_paths"]:
        assert time.monotonic() < deadline, "the watcher still holds paths"
        time.sleep(0.05)  # polling the watcher's published status; there is no event to wait on


def test_edits_deletes_and_branch_switches_reach_the_window(
    fake: FakeProvider, repo: Path, tmp_path: Path
) -> None:
    git(repo, "checkout", "-q", "-b", "other")
    (repo / "README.md").write_text("# demo\nOn the other branch.\n")
    (repo / "only_on_other.py").write_text("OTHER = 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "other branch readme")
    git(repo, "checkout", "-q", "main")
    fake.script(
        ToolUse("Read", {"file_path": "src/app.py"}),
        ToolUse("Read", {"file_path": "src/util/strings.py"}),
        ToolUse("Read", {"file_path": "README.md"}),
        Text("read them"),
        Text("noticed the changes"),
    )
    env = provider_env(fake, "anthropic") | {"LIVE_MEMORY_WATCHER": "os"}
    with AppServer(tmp_path / "data", env) as server:
        reply = server.request("POST", "/api/ask", json={"question": "read?", "cwd": str(repo)})
        assert reply.status_code == 200, reply.text
        health = server.request("GET", "/health").json()
        assert health["watcher"]["mode"] in ("inotify", "polling")
        (repo / "src" / "app.py").write_text("def answer():\n    return 43\n")
        stats = _wait_for_stats(server, repo, "stale", 1)
        assert stats["file_contexts"]["stale"] == 1
        (repo / "src" / "util" / "strings.py").unlink()
        stats = _wait_for_stats(server, repo, "deleted", 1)
        assert stats["file_contexts"]["deleted"] == 1
        git(repo, "stash", "-q")  # keep the branch switch clean: only README differs
        git(repo, "checkout", "-q", "other")
        stats = _wait_for_stats(server, repo, "stale", 2)
        assert stats["file_contexts"]["stale"] >= 2
        _wait_until_released(server)
        server.request("POST", "/api/ask", json={"question": "changes?", "cwd": str(repo)})
    first = json.dumps(fake.requests[0].body, ensure_ascii=False)
    last = json.dumps(fake.requests[-1].body, ensure_ascii=False)
    assert "src/app.py — CHANGED" in last
    assert "README.md — CHANGED" in last
    # HEAD moved: the next question's directory tree is rebuilt (with a new freeze).
    assert "only_on_other.py" not in first
    assert "only_on_other.py" in last
