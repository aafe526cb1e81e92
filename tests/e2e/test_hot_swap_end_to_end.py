"""Hot-swapping the provider with `live-memory config set`: no restart, no lost history."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import provider_env
from tests.e2e.test_concurrency_end_to_end import _warm
from tests.e2e.test_lifecycle_end_to_end import _ask
from tests.support.fakes import FakeProvider, Text
from tests.support.server_process import ServerProcess

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def test_config_set_moves_the_next_question_to_another_provider(
    fake: FakeProvider, repo: Path, tmp_path: Path
) -> None:
    fake.responder = lambda recorded: Text("from the first provider")
    with (
        FakeProvider(default_reply=Text("from the second provider")) as second,
        ServerProcess(tmp_path / "data", provider_env(fake, "anthropic")) as server,
    ):
        assert server.proc is not None
        pid = server.proc.pid
        _warm(server, repo)
        assert _ask(server, repo, "first question?").json()["answer"] == ("from the first provider")
        swap = subprocess.run(
            [
                sys.executable,
                "-m",
                "live_memory.cli",
                "config",
                "set",
                f"base_url={second.anthropic_base_url}",
                "model=claude-sonnet-4-6",
                "--server",
                server.url,
            ],
            check=False,
            capture_output=True,
            text=True,
            timeout=60,
            env=server.env,
        )
        assert swap.returncode == 0, swap.stderr + swap.stdout
        health = server.request("GET", "/health").json()
        assert health["model"] == "claude-sonnet-4-6"
        reply = _ask(server, repo, "second question?").json()
        stats = server.request("GET", "/stats", params={"cwd": str(repo)}).json()
        assert server.proc.pid == pid
    assert reply["answer"] == "from the second provider"
    assert reply["model"] == "claude-sonnet-4-6"
    assert len(second.requests) == 1
    assert "first question?" in json.dumps(second.requests[0].body)
    assert stats["messages_retained"] == 4
