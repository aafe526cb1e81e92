"""A full data disk: a real tmpfs under a real server, filled to the last block."""

from __future__ import annotations

import os
from pathlib import Path

from tests.support.fakes import FakeProvider, Text
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
