"""Issue 18 item 2, remembered: an endpoint that ignored a forced tool call is not forced again,
on the next question nor after a restart (the note lives in the data dir).

The endpoint is an Anthropic-compatible gateway on loopback (the fake provider): by its kind
it should honour `tool_choice`, so the first cold question forces a tool; the scripted model
answers in prose instead, as a gateway in front of a model that drops `tool_choice` would. The
workspace is Ruby (no grammar in the structural index), so every question stays cold.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from live_memory.agent.grounding import UNVERIFIED_NOTE
from tests.e2e.conftest import ensure_workspace, provider_env
from tests.support.app_server import AppServer
from tests.support.fakes import FakeProvider, Text
from tests.support.mcp_client import call_tool
from tests.support.repo import make_repo

pytestmark = pytest.mark.e2e

PARSER = "class OptionParser\n  def parse_args(args)\n    args\n  end\nend\n"
QUESTION = "Which class parses the command-line options?"
FIRST = "The options are parsed by `OptionParser` in lib/click/parser.rb."
GROUNDED = "`OptionParser` is defined at lib/click/parser.rb:1."


def ask(server: AppServer, repo: Path) -> str:
    is_error, text = call_tool(
        server.url, "ask_live_memory", {"question": QUESTION, "cwd": str(repo)}
    )
    assert not is_error, text
    return text.split("\n---\n[live-memory]")[0]


def forced(fake: FakeProvider, since: int) -> list[bool]:
    return ["tool_choice" in r.body for r in fake.requests[since:]]


def test_a_forced_tool_ignored_once_is_not_forced_again_even_after_a_restart(
    fake: FakeProvider, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "click", {"lib/click/parser.rb": PARSER})
    data = tmp_path / "data"
    env = provider_env(fake, "anthropic")

    with AppServer(data, env) as server:
        ensure_workspace(server.url, repo)
        facts = server.request("GET", "/stats", params={"cwd": str(repo)}).json()
        assert facts["endpoint_facts"]["forced_tool"] == {
            "value": "honoured",
            "source": "endpoint kind",
        }
        fake.script(Text(FIRST), Text("I think it is OptionParser."))  # the force ignored
        assert ask(server, repo) == f"{FIRST}\n\n{UNVERIFIED_NOTE}"
        assert forced(fake, 0) == [False, True]
        note = server.request("GET", "/stats", params={"cwd": str(repo)}).json()
        seen = note["endpoint_facts"]["forced_tool"]
        assert (seen["value"], seen["source"]) == ("ignored", "seen")

        fake.script(Text(FIRST), Text(GROUNDED))  # the next question: our own search
        assert ask(server, repo) == GROUNDED
        assert forced(fake, 2) == [False, False]
        assert "lib/click/parser.rb:1:class OptionParser" in str(fake.requests[3].body)

    with AppServer(data, env) as server:  # a restart: the note is read back
        fake.script(Text(FIRST), Text(GROUNDED))
        assert ask(server, repo) == GROUNDED
        assert forced(fake, 4) == [False, False]
