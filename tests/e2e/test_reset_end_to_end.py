"""Preload globs, /reset (wipe and re-preload now) and /clear (wipe only)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from live_memory.config import constants as C
from tests.e2e.conftest import provider_env
from tests.e2e.test_lifecycle_end_to_end import _ask
from tests.support.app_server import AppServer, RunningServer
from tests.support.fakes import FakeProvider, Text

pytestmark = pytest.mark.e2e


def _stats(server: RunningServer, repo: Path) -> dict[str, object]:
    return dict(server.request("GET", "/stats", params={"cwd": str(repo)}).json())


def test_preload_reset_and_clear(fake: FakeProvider, repo: Path, tmp_path: Path) -> None:
    (repo / "docs").mkdir()
    (repo / "docs" / "guide.md").write_text("# Guide\nPRELOADED-GUIDE-MARKER\n")
    (repo / "docs" / ".env").write_text("SECRET=1\n")
    env = provider_env(fake, "anthropic") | {"LIVE_MEMORY_PRELOAD_GLOBS": "docs/*.md,README.md"}
    fake.responder = lambda recorded: Text("answer")
    with AppServer(tmp_path / "data", env) as server:
        assert _ask(server, repo, "what is in the guide?").status_code == 200
        assert "PRELOADED-GUIDE-MARKER" in json.dumps(fake.requests[0].body["system"])
        stats = _stats(server, repo)
        assert stats["file_contexts"]["with_content"] == 2  # type: ignore[index]
        assert stats["messages_retained"] == 2
        # The answer waited for the unsettled copy; the settler renames it to `.json` after
        # (either name is the snapshot, and the reset must remove both).
        workspaces = tmp_path / "data" / "workspaces"
        names = {p.name.removesuffix(C.SNAPSHOT_UNSETTLED_SUFFIX) for p in workspaces.iterdir()}
        snapshots = [workspaces / n for n in names if n.endswith(".json")]
        snapshots += [p.with_name(p.name + C.SNAPSHOT_UNSETTLED_SUFFIX) for p in snapshots]
        assert snapshots and any(p.exists() for p in snapshots)

        reset = server.request("POST", "/reset", json={"cwd": str(repo)}).json()
        assert reset["messages_retained"] == 0
        assert reset["file_contexts"]["with_content"] == 2
        assert not any(p.exists() for p in snapshots)

        cleared = server.request("POST", "/clear", json={"cwd": str(repo)}).json()
        assert cleared["messages_retained"] == 0
        assert cleared["file_contexts"]["loaded"] == 0

        assert server.request("POST", "/reset", json={}).status_code == 422
        assert server.request("POST", "/clear", json={"cwd": "relative"}).status_code == 422
