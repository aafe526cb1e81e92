"""Preload globs, /reset (wipe and re-preload now) and /clear (wipe only)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from live_memory.config import constants as C
from tests.cli.conftest import cli
from tests.e2e.conftest import provider_env
from tests.e2e.test_lifecycle_end_to_end import _ask
from tests.support.app_server import AppServer, RunningServer
from tests.support.fakes import FakeProvider, Text
from tests.support.repo import make_repo

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


def _workspace_actors(server: RunningServer) -> list[str]:
    listing = server.request("GET", "/actors").json()
    actors = listing["actors"] if isinstance(listing, dict) else listing
    return [a["workspace"] for a in actors if a["kind"] == "workspace"]


def test_empty_all_wipes_every_workspace_loaded_or_passivated(
    fake: FakeProvider, tmp_path: Path
) -> None:
    repos = [
        make_repo(tmp_path / n, {"src/app.py": "def answer():\n    return 42\n"}) for n in "ab"
    ]
    # One active workspace at most: importing into the second passivates the first.
    env = provider_env(fake, "anthropic") | {"LIVE_MEMORY_WORKSPACES_ACTIVE_MAX": "1"}
    data = tmp_path / "data"
    with AppServer(data, env) as server:
        for repo in repos:
            fact = {"text": f"{repo.name} answers 42 in src/app.py", "category": "architecture"}
            reply = server.request("POST", "/api/import", json={"cwd": str(repo), "facts": [fact]})
            assert reply.status_code == 200, reply.text
        deadline = time.monotonic() + 60
        while _workspace_actors(server) != [str(repos[1])]:  # the first one passivated
            assert time.monotonic() < deadline, _workspace_actors(server)
            time.sleep(0.05)
        assert len(list((data / "workspaces").glob("*.json*"))) == 2
        indexes = sorted((data / "index").glob("*.sqlite3"))
        assert len(indexes) == 2

        refused = server.request("POST", "/clear", json={"all": "yes"})
        assert refused.status_code == 422 and "true or false" in refused.text
        both = server.request("POST", "/clear", json={"all": True, "cwd": str(repos[0])})
        assert both.status_code == 422 and "not both" in both.text

        outcome = cli(["empty", "--all", "--server", server.url])
        assert outcome.code == 0, outcome.err
        assert outcome.out == "emptied every workspace: 2 (1 loaded, 1 stored)\n"

        # The passivated one: nothing left on disk, so the server knows it no more.
        assert server.request("GET", "/stats", params={"cwd": str(repos[0])}).status_code == 404
        # The loaded one: an empty memory, its facts forgotten.
        stats = _stats(server, repos[1])
        assert stats["ledger_facts"] == 0 and stats["questions_answered"] == 0
        exported = server.request("GET", "/api/export", params={"cwd": str(repos[1])}).json()
        assert exported["facts"] == []
        assert not list((data / "workspaces").glob("*.json*"))
        assert [p.name for p in (data / "index").glob("*.sqlite3")] == [
            p.name for p in indexes if p.exists()
        ]
        assert not list((data / "index").glob("*.sqlite3"))  # emptied: its index too

        again = cli(["empty", "--all", "--json", "--server", server.url])
        assert json.loads(again.out) == {"cleared": 1, "loaded": 1, "stored": 0}
    # Restarted, the first workspace's facts are gone from the fact store too: activated
    # again (an empty import), it finds none to make resident.
    with AppServer(data, env) as server:
        body = {"cwd": str(repos[0]), "facts": []}
        assert server.request("POST", "/api/import", json=body).status_code == 200
        reply = server.request("GET", "/api/export", params={"cwd": str(repos[0])})
        assert reply.json()["facts"] == []
