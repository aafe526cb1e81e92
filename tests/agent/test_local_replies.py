"""The agent loop against the replaying local-server fake (real openai SDK, real HTTP).

Issue 18 items 2 and 3: grounding that does not depend on `tool_choice`, and replies that are
not answers (calls written as text, echoes, imitations) never returned or stored.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from live_memory.agent.grounding import (
    UNVERIFIED_NOTE,
    forced_tool_support,
    guard_action,
    locate,
    search_terms,
)
from live_memory.agent.loop import LoopLimits, LoopResult, run_agent_loop
from live_memory.agent.reply_check import judge_reply
from live_memory.memory import Window
from live_memory.providers import OpenAIProvider
from live_memory.tools import Toolbox
from tests.support.fakes import (
    CopiesLastAssistant,
    EchoesToolResult,
    FakeLocalServer,
    Says,
    WritesCall,
    recorded,
)
from tests.support.linearity import assert_linear

QUESTION = "Question: Which class parses the command-line options, and in which file?"
FIRST = "The class that parses the options is `OptionParser` from `src/click/parser.py`."
SPECS = Toolbox.specs()


@pytest.fixture(scope="module")
def server() -> Iterator[FakeLocalServer]:
    with FakeLocalServer(flavour="llama-cpp-python") as fake:
        yield fake


@pytest.fixture
def fake(server: FakeLocalServer) -> Iterator[FakeLocalServer]:
    server.reset()
    yield server
    server.reset()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "src" / "click").mkdir(parents=True)
    source = (
        "import os\n\n\nclass OptionParser:\n    def parse_args(self, args):\n        return 1\n"
    )
    (tmp_path / "src" / "click" / "parser.py").write_text(source, encoding="utf-8")
    return tmp_path


def run(
    fake: FakeLocalServer, root: Path, question: str = QUESTION, **limits: object
) -> LoopResult:
    async def go() -> LoopResult:
        provider = OpenAIProvider(fake.openai_base_url, None)
        try:
            return await run_agent_loop(
                provider,
                Window(str(root)),
                question,
                toolbox=Toolbox(root),
                model="qwen2.5-coder-0.5b",
                system_prompt="system",
                limits=LoopLimits(
                    soft_deadline=time.monotonic() + 60,
                    max_answer_tokens=256,
                    **limits,  # type: ignore[arg-type]
                ),
            )
        finally:
            await provider.aclose()

    return asyncio.run(go())


def contents(fake: FakeLocalServer, index: int) -> list[str]:
    return [str(m.get("content")) for m in fake.chat_requests[index].body["messages"]]


# --- the pure parts ------------------------------------------------------------------------


def test_forcing_is_relied_on_only_where_the_endpoint_honours_it() -> None:
    assert forced_tool_support("openai", "http://127.0.0.1:8080/v1") == "ignored"
    assert forced_tool_support("openai", "https://api.openai.com/v1") == "honoured"
    assert forced_tool_support("anthropic", "https://api.anthropic.com") == "honoured"
    cold = {"cold": True, "tool_calls": 0, "final_turn": False}
    assert guard_action(**cold, forcing="honoured") == "force_tool"  # type: ignore[arg-type]
    assert guard_action(**cold, forcing="ignored") == "search_here"  # type: ignore[arg-type]
    local = guard_action(**cold, forcing="ignored", local=True)  # type: ignore[arg-type]
    assert local == "check_here"
    assert guard_action(cold=False, tool_calls=0, final_turn=False, forcing="ignored") == "accept"


def test_prose_about_search_results_is_an_answer_not_invented_output() -> None:
    text = "Grep results: 3 files match; the parser is src/click/parser.py:4."
    assert judge_reply(text, SPECS).kind == "answer"


@pytest.mark.parametrize(
    "text",
    [
        "[best-effort answer: the time budget ran out before a complete answer]\nNo findings",
        "[no answer: the local model replied with nothing instead of an answer]",
    ],
)
def test_a_copy_of_a_server_notice_is_no_answer(text: str) -> None:
    assert judge_reply(text, SPECS).kind == "imitation"


def test_search_terms_come_from_the_question_first_then_the_answer() -> None:
    assert search_terms("Where is `echo` defined?", "It is `click.utils.echo`.") == ["echo"]
    assert search_terms("Which class parses options?", FIRST) == ["OptionParser"]
    assert search_terms("What does split_arg_string do?", "") == ["split_arg_string"]
    assert search_terms("What does this repo do?", "It parses things.") == []


def test_search_terms_are_linear_on_one_long_token() -> None:
    # "Aa" + 24 capitals + "_" took 1 s (each added capital doubled it): CamelCase's nested
    # repeat tried every split of the run.
    assert search_terms("Is Aa" + "A" * 40 + "_ here?", "") == []
    assert_linear(lambda text: search_terms(text, text))


@pytest.mark.parametrize(
    ("recording", "seq", "kind"),
    [
        ("ours05", 11, "imitation"),  # "Noted."
        ("ours05", 12, "imitation"),  # an invented "[observation]" block
        ("ours15", 2, "imitation"),  # invented "**Grep output:**"
        ("oursLS15tools", 2, "echo"),  # <tool_response> echoed
        ("oursLS15", 2, "refusal"),  # "as an AI model, I don't have access"
        ("ours05", 1, "call_shaped"),  # a call written as text (recovered as Read)
        ("ours15", 1, "answer"),
    ],
)
def test_recorded_replies_are_judged(recording: str, seq: int, kind: str) -> None:
    [reply] = recorded(recording, [seq])
    assert judge_reply(reply.text, SPECS).kind == kind


# --- fault 1: a forced tool ignored, a first answer kept ----------------------------------


def test_a_local_endpoint_is_grounded_by_our_own_search_not_by_tool_choice(
    fake: FakeLocalServer, root: Path
) -> None:
    fake.script(Says(FIRST), Says("`OptionParser` is defined in src/click/parser.py:4."))

    result = run(fake, root)

    assert result.answer == "`OptionParser` is defined in src/click/parser.py:4."
    assert not result.unverified and result.tool_calls == 1
    assert all("tool_choice" not in r.body for r in fake.chat_requests)
    search_turn = contents(fake, 1)[-1]
    assert search_turn.startswith("[Live Memory searched the workspace for `OptionParser`")
    assert "src/click/parser.py:4:class OptionParser:" in search_turn
    assert contents(fake, 1)[-2] == FIRST  # the first answer stays in view


def test_a_refusal_after_our_search_keeps_the_first_answer_marked_unverified(
    fake: FakeLocalServer, root: Path
) -> None:
    [refusal] = recorded("oursLS15", [2])
    fake.script(Says(FIRST), refusal)

    result = run(fake, root)

    assert (result.answer, result.unverified) == (FIRST, True)
    assert len(fake.chat_requests) == 2


def test_nothing_to_search_for_keeps_the_first_answer_unverified_without_another_call(
    fake: FakeLocalServer, root: Path
) -> None:
    fake.script(Says("It is a command-line toolkit."))

    result = run(fake, root, "Question: What is this repository?")

    assert (result.answer, result.unverified) == ("It is a command-line toolkit.", True)
    assert len(fake.chat_requests) == 1


def test_a_forced_tool_the_server_ignores_keeps_the_good_first_answer(
    fake: FakeLocalServer, root: Path
) -> None:
    [invented] = recorded("ours15", [2])  # "Understood. Let's search ... **Grep output:**"
    fake.script(Says(FIRST), invented)

    result = run(fake, root, forced_tool="honoured")

    assert fake.chat_requests[1].body["tool_choice"] == "required"
    assert (result.answer, result.unverified, result.forced_tool_ignored) == (FIRST, True, True)
    assert UNVERIFIED_NOTE not in result.answer  # the note is added by the caller, not stored


def test_locate_reads_grep_content_lines() -> None:
    output = "src/a.py:4:class OptionParser:\nsrc/b.py:9:    ctx = Context()\nNo more"
    assert locate(["OptionParser", "Context", "Missing"], output) == {
        "OptionParser": "src/a.py:4",
        "Context": "src/b.py:9",
    }
    assert locate(["Parser"], "src/a.py:4:class OptionParser:") == {}  # whole words only


def test_on_a_local_endpoint_the_guard_checks_the_first_answer_without_a_second_call(
    fake: FakeLocalServer, root: Path
) -> None:
    fake.script(Says(FIRST), Says("never asked"))

    result = run(fake, root, local=True)

    assert (result.answer, result.unverified) == (FIRST, False)
    assert result.checked == (
        "[checked in the workspace without a model call: `OptionParser` src/click/parser.py:4]"
    )
    assert len(fake.chat_requests) == 1 and result.tool_calls == 1
    assert all("tool_choice" not in r.body for r in fake.chat_requests)


def test_a_checked_answer_naming_what_the_workspace_lacks_is_marked_unverified(
    fake: FakeLocalServer, root: Path
) -> None:
    invented = "Options are parsed by `ArgumentReader` in src/click/reader.py."
    fake.script(Says(invented))

    result = run(fake, root, local=True)

    assert (result.answer, result.unverified) == (invented, True)
    assert "`ArgumentReader` not found" in result.checked
    assert len(fake.chat_requests) == 1 and result.tool_calls == 2  # definitions, then mentions


# --- fault 2: calls written as text are run or refused, never the answer ------------------


def test_a_made_up_name_with_reads_arguments_is_run_as_read(
    fake: FakeLocalServer, root: Path
) -> None:
    fake.script(
        WritesCall("click.ArgumentParser", {"file_path": "src/click/parser.py"}, extra_brace=True),
        Says("`OptionParser` is in src/click/parser.py:4."),
    )

    result = run(fake, root)

    assert result.answer == "`OptionParser` is in src/click/parser.py:4."
    assert [r.path for r in result.reads] == ["src/click/parser.py"]
    assert "class OptionParser" in contents(fake, 1)[-1]  # the tool result went back


def test_an_unknown_call_gets_the_tool_list_once_then_a_notice_not_the_text(
    fake: FakeLocalServer, root: Path
) -> None:
    junk = WritesCall("search", {"pattern": "OptionParser"}, "fenced")
    fake.script(junk, junk)

    result = run(fake, root)

    correction = contents(fake, 1)[-1]
    assert "`search` is not one of your tools" in correction and "Read(file_path" in correction
    assert result.answer.startswith("[no answer: the local model replied with a tool call")
    assert '"name"' not in result.answer and not result.storable
    assert len(fake.chat_requests) == 2


def test_an_echoed_tool_response_is_corrected_and_never_the_answer(
    fake: FakeLocalServer, root: Path
) -> None:
    fake.script(
        WritesCall("Grep", {"pattern": "class OptionParser"}),
        EchoesToolResult(),
        Says("`OptionParser` is defined in src/click/parser.py."),
    )

    result = run(fake, root)

    assert result.answer == "`OptionParser` is defined in src/click/parser.py."
    assert result.non_answer == "echo"
    assert contents(fake, 2)[-1].startswith("That reply repeated tool output")


def test_an_imitated_ack_is_not_an_answer(fake: FakeLocalServer, root: Path) -> None:
    fake.script(
        WritesCall("Read", {"file_path": "src/click/parser.py"}),
        CopiesLastAssistant(),
        CopiesLastAssistant(),
    )

    result = run(fake, root)

    assert result.answer.startswith("[no answer:") and not result.storable
