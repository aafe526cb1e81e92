"""Issue 18 faults 1-3 end to end: the real server, the real mcp client, the replaying fake of
a local llama.cpp server (tests/support/fakes/fake_local_server.py) behind the openai SDK.

1. A forced tool the server ignores: the good first answer is kept, never replaced by invented
   "Grep output"; on a local endpoint it is checked by our own search (the names it uses
   looked up in the workspace), not re-asked, and never relies on `tool_choice`.
2. Calls written as text are run (or refused with the tool list), never returned or stored;
   an echoed `<tool_response>` is never stored.
3. Observation deltas carry no ack turn to imitate, and a copied framing is not an answer.

One fake and one in-process server for the module; each test has its own repository (its own
workspace), so their histories are independent.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from live_memory.agent.grounding import UNVERIFIED_NOTE
from tests.support.app_server import AppServer
from tests.support.fakes import (
    CopiesObservation,
    EchoesToolResult,
    FakeLocalServer,
    Says,
    WritesCall,
    recorded,
)
from tests.support.mcp_client import call_tool
from tests.support.repo import make_repo

pytestmark = pytest.mark.e2e

PARSER = (
    "import os\n\n\nclass OptionParser:\n    def parse_args(self, args):\n        return args\n"
)
QUESTION = "Which class parses the command-line options and arguments, and in which file?"
FIRST = "The class that parses the options is `OptionParser` from `src/click/parser.py`."


@pytest.fixture(scope="module")
def local() -> Iterator[FakeLocalServer]:
    with FakeLocalServer(flavour="llama-cpp-python", n_ctx=32768) as fake:
        yield fake


@pytest.fixture(scope="module")
def server(local: FakeLocalServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppServer]:
    env = {
        "LIVE_MEMORY_PROVIDER": "openai",
        "OPENAI_API_KEY": "no-key",
        "OPENAI_BASE_URL": local.openai_base_url,
        "LIVE_MEMORY_MODEL": "qwen2.5-coder-1.5b",
        "LIVE_MEMORY_MAX_CONTEXT_TOKENS": "32768",
        # Fault 1 is the cold guard on a new workspace; a structural index covering the
        # repository would ground it (no guard), so these workspaces have none.
        "LIVE_MEMORY_SYMBOL_INDEX": "false",
    }
    with AppServer(tmp_path_factory.mktemp("data"), env) as app:
        yield app


@pytest.fixture
def fake(local: FakeLocalServer) -> Iterator[FakeLocalServer]:
    local.reset()
    yield local
    local.reset()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "click", {"src/click/parser.py": PARSER, "README.md": "# click\n"})


def ask(server: AppServer, repo: Path, question: str) -> str:
    is_error, text = call_tool(
        server.url, "ask_live_memory", {"question": question, "cwd": str(repo)}
    )
    assert not is_error, text
    return text.split("\n---\n[live-memory]")[0]


def prompt_text(fake: FakeLocalServer, index: int = -1) -> list[tuple[str, str]]:
    messages = fake.chat_requests[index].body["messages"]
    return [(str(m["role"]), str(m.get("content") or "")) for m in messages]


def test_fault_1_a_good_first_answer_is_kept_and_checked_without_a_second_call(
    server: AppServer, fake: FakeLocalServer, repo: Path
) -> None:
    [invented] = recorded("ours15", [2])  # "Understood. Let's search ... **Grep output:**"
    fake.script(Says(FIRST), invented)

    answer = ask(server, repo, QUESTION)

    checked = (
        "[checked in the workspace without a model call: `OptionParser` src/click/parser.py:4]"
    )
    assert answer == f"{FIRST}\n\n{checked}"  # the locations come from our search
    assert len(fake.chat_requests) == 1  # no second call to rewrite (or spoil) the answer
    assert all("tool_choice" not in r.body for r in fake.chat_requests)  # never relied on
    fake.reset()
    fake.script(Says("It is used by `Context` in src/click/core.py."))
    ask(server, repo, "And where is it used?")
    history = prompt_text(fake)
    assert ("assistant", FIRST) in history  # stored without the note
    assert not any("Grep output" in text or "[checked" in text for _, text in history)


def test_fault_1_a_first_answer_naming_what_the_workspace_lacks_is_marked_unverified(
    server: AppServer, fake: FakeLocalServer, repo: Path
) -> None:
    invented = "Options are parsed by `ArgumentReader` in src/click/reader.py."
    fake.script(Says(invented))

    answer = ask(server, repo, QUESTION)

    assert answer.startswith(f"{invented}\n\n[checked in the workspace without a model call: ")
    assert "`ArgumentReader` not found" in answer
    assert answer.endswith(UNVERIFIED_NOTE)
    assert len(fake.chat_requests) == 1


def test_fault_2_call_shaped_text_is_run_or_refused_and_never_returned_or_stored(
    server: AppServer, fake: FakeLocalServer, repo: Path
) -> None:
    read = WritesCall("click.ArgumentParser", {"file_path": "src/click/parser.py"}, "bare", True)
    unknown = WritesCall("search", {"pattern": "OptionParser"}, "fenced")
    fake.script(read, Says("`OptionParser` is in src/click/parser.py:4."), unknown, unknown)

    first = ask(server, repo, QUESTION)
    second = ask(server, repo, "Where is parse_args?")

    assert first == "`OptionParser` is in src/click/parser.py:4."  # the made-up name ran as Read
    assert "class OptionParser" in prompt_text(fake, 1)[-1][1]
    assert second.startswith("[no answer: the local model replied with a tool call")
    assert "`search` is not one of your tools" in prompt_text(fake, 3)[-1][1]
    fake.script(Says("done"))
    ask(server, repo, "Anything else?")
    history = prompt_text(fake)
    assert not any('"name"' in text or "[no answer" in text for _, text in history)
    assert not any("Where is parse_args?" in text for _, text in history[:-1])  # not stored


def test_fault_2_an_echoed_tool_response_is_never_stored(
    server: AppServer, fake: FakeLocalServer, repo: Path
) -> None:
    fake.script(
        WritesCall("Grep", {"pattern": "class OptionParser"}, "tags"),
        EchoesToolResult(),
        Says("`OptionParser` is defined in src/click/parser.py."),
        Says("done"),
    )

    answer = ask(server, repo, QUESTION)
    ask(server, repo, "Anything else?")

    assert answer == "`OptionParser` is defined in src/click/parser.py."
    assert not any("<tool_response>" in text for _, text in prompt_text(fake))


def test_fault_3_observations_have_no_ack_to_imitate_and_a_copied_framing_is_no_answer(
    server: AppServer, fake: FakeLocalServer, repo: Path
) -> None:
    server.request("POST", "/clear", json={"cwd": str(repo)}).raise_for_status()
    held = {"path": "README.md", "kind": "read", "content": "# click\n"}
    server.request("POST", "/notify", json={"cwd": str(repo), "events": [held]})
    fake.script(Says("`OptionParser` is in src/click/parser.py:4."))
    ask(server, repo, QUESTION)  # a held file: not cold, one call
    fake.reset()
    event = {"path": "src/click/parser.py", "kind": "write", "content": PARSER + "# v2\n"}
    reply = server.request("POST", "/notify", json={"cwd": str(repo), "events": [event]})
    assert reply.json() == {"accepted": 1, "ignored": 0}
    fake.script(CopiesObservation(), Says("parse_args is in src/click/parser.py:5."))

    answer = ask(server, repo, "Where is parse_args?")

    assert answer == "parse_args is in src/click/parser.py:5."
    messages = prompt_text(fake, 0)
    update = next(i for i, (_, text) in enumerate(messages) if "[workspace update" in text)
    assert messages[update][0] == "user" and messages[update + 1][0] == "user"  # no ack after
    assert not any(role == "assistant" and text == "Noted." for role, text in messages)
    assert "[end of workspace update]" in messages[update][1]
    fake.script(Says("done"))
    ask(server, repo, "Anything else?")
    assert not any(
        role == "assistant" and text.startswith("[workspace update")
        for role, text in prompt_text(fake)
    )
