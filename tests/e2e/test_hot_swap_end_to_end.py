"""Hot-swapping the provider with `live-memory config set`: no restart, no lost history.

The swap is the app's (PUT /config), so the server is served in process and the command runs
through the CLI's entry point in process: no interpreter start for either."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.conftest import cli
from tests.e2e.conftest import provider_env
from tests.e2e.test_concurrency_end_to_end import _warm
from tests.e2e.test_lifecycle_end_to_end import _ask
from tests.support.app_server import AppServer
from tests.support.fakes import FakeProvider, Text

pytestmark = pytest.mark.e2e


def test_config_set_moves_the_next_question_to_another_provider(
    fake: FakeProvider, repo: Path, tmp_path: Path
) -> None:
    fake.responder = lambda recorded: Text("from the first provider")
    with (
        FakeProvider(default_reply=Text("from the second provider")) as second,
        AppServer(tmp_path / "data", provider_env(fake, "anthropic")) as server,
    ):
        _warm(server, repo)
        assert _ask(server, repo, "first question?").json()["answer"] == ("from the first provider")
        # `live-memory config set`, run in process through the CLI's own entry point.
        swap = cli(
            [
                "config",
                "set",
                f"base_url={second.anthropic_base_url}",
                "model=claude-sonnet-4-6",
                "--server",
                server.url,
            ],
            server.env,
        )
        assert swap.code == 0, swap.err + swap.out
        health = server.request("GET", "/health").json()
        assert health["model"] == "claude-sonnet-4-6"
        reply = _ask(server, repo, "second question?").json()
        stats = server.request("GET", "/stats", params={"cwd": str(repo)}).json()
    assert reply["answer"] == "from the second provider"
    assert reply["model"] == "claude-sonnet-4-6"
    assert len(second.requests) == 1
    # No restart: the same running workspace carried the first question over to the second.
    assert "first question?" in json.dumps(second.requests[0].body)
    assert stats["messages_retained"] == 4
