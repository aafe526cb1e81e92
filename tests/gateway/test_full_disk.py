"""A full data disk: a real tmpfs under a real server, filled to the last block."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

from tests.support.fakes import FakeProvider, Text
from tests.support.fixtures import TRANSCRIPT
from tests.support.mcp_client import call_tool
from tests.support.repo import make_repo
from tests.support.server_process import ServerProcess
from tests.support.small_disk import fill, small_disk

ASK_TIMEOUT_S = 30.0
"""Well under the edge's 75 s reply timeout the refusal used to wait for."""


def test_a_full_data_disk_refuses_questions_at_once_with_507_and_health_says_why(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo", {"src/app.py": "def answer():\n    return 42\n"})
    with (
        FakeProvider() as fake,
        small_disk(tmp_path / "data") as data,
        ServerProcess(
            tmp_path,  # the server's own log stays off the full disk
            {
                "LIVE_MEMORY_DATA_DIR": str(data),
                "ANTHROPIC_API_KEY": "dummy-key",
                "ANTHROPIC_BASE_URL": fake.anthropic_base_url,
            },
        ) as server,
    ):
        fake.responder = lambda recorded: Text("forty-two")
        assert server.request("GET", "/health").json()["status"] == "ok"
        filler = data / "filler"
        fill(filler)
        ask = {"question": "what does answer return?", "cwd": str(repo)}

        refused = server.request("POST", "/api/ask", json=ask, timeout=ASK_TIMEOUT_S)
        assert refused.status_code == 507, refused.text
        assert refused.json()["kind"] == "StorageFull"
        assert "data directory cannot be written" in refused.json()["error"]
        health = server.request("GET", "/health").json()
        assert health["status"] == "degraded"
        assert "data directory" in health["degraded_reason"]
        assert health["data_disk"]["degraded_reason"] == health["degraded_reason"]
        is_error, text = call_tool(server.url, "ask_live_memory", ask)
        assert is_error
        assert "data directory cannot be written" in text
        assert not fake.requests  # nothing was spent on an answer that could not be kept

        os.unlink(filler)
        assert server.request("GET", "/health").json()["status"] == "ok"
        answered = server.request("POST", "/api/ask", json=ask, timeout=ASK_TIMEOUT_S)
        assert answered.status_code == 200, answered.text
        assert "forty-two" in answered.json()["answer"]

        # Restarted on a full disk, the known workspace's index is reopened: SQLite says only
        # "disk I/O error" (its WAL files cannot grow), a want of storage all the same.
        server.stop()
        server.start()
        fill(filler)
        again = server.request("POST", "/api/ask", json=ask, timeout=ASK_TIMEOUT_S)
        assert again.status_code == 507, again.text
        assert server.request("GET", "/health").json()["status"] == "degraded"


def test_a_workspace_that_cannot_load_on_a_full_disk_answers_507_not_a_timeout(
    tmp_path: Path,
) -> None:
    # Loading claims the workspace's queued transcript (a SQLite write): on a full disk that
    # raised in the actor's start, which left the activating question unanswered for 75 s.
    repo = make_repo(tmp_path / "repo", {"src/app.py": "def answer():\n    return 42\n"})
    transcript = tmp_path / "session.jsonl"
    shutil.copy(TRANSCRIPT, transcript)
    with (
        FakeProvider() as fake,
        small_disk(tmp_path / "data") as data,
        ServerProcess(
            tmp_path,
            {
                "LIVE_MEMORY_DATA_DIR": str(data),
                "LIVE_MEMORY_SYMBOL_INDEX": "false",  # no index to fail first
                "LIVE_MEMORY_PASSIVATE_AFTER_S": "1",
            },
        ) as server,
    ):
        fake.responder = lambda recorded: Text("forty-two")
        queued = {"cwd": str(repo), "session_id": "s1", "transcript_path": str(transcript)}
        assert server.request("POST", "/api/enqueue", json=queued).status_code == 200
        deadline = time.monotonic() + ASK_TIMEOUT_S
        while server.request("GET", "/health").json()["workspaces_active"]:
            assert time.monotonic() < deadline, "the idle workspace was never passivated"
            time.sleep(0.1)  # the idle sweep's; no event to wait on from outside
        # A provider now (the queued transcript waited for one), then the disk fills.
        (data / "config.json").write_text(
            json.dumps({"api_key": "dummy-key", "base_url": fake.anthropic_base_url})
        )
        assert server.request("POST", "/reload", json={}).status_code == 200
        fill(data / "filler")

        ask = {"question": "what does answer return?", "cwd": str(repo)}
        refused = server.request("POST", "/api/ask", json=ask, timeout=ASK_TIMEOUT_S)
        assert refused.status_code == 507, refused.text
        assert server.request("GET", "/health").json()["status"] == "degraded"
        os.unlink(data / "filler")
        answered = server.request("POST", "/api/ask", json=ask, timeout=ASK_TIMEOUT_S)
        assert answered.status_code == 200, answered.text
