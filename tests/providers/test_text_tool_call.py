from __future__ import annotations

import json
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from live_memory.config import constants as C
from live_memory.providers.text_tool_call import (
    UNPARSED_ARGUMENTS_KEY,
    parse_arguments,
    read_text_reply,
    tool_calls_from_text,
)
from live_memory.tools import Toolbox
from tests.support.fakes import WritesCall, call_text, recorded

OFFERED = {"Read", "Grep"}


def test_arguments_decode_once_or_twice() -> None:
    once = '{"pattern": "TODO"}'

    assert parse_arguments(once) == {"pattern": "TODO"}
    assert parse_arguments(json.dumps(once)) == {"pattern": "TODO"}
    assert parse_arguments({"pattern": "TODO"}) == {"pattern": "TODO"}
    assert parse_arguments("") == {}
    assert parse_arguments(None) == {}


def test_arguments_that_are_not_an_object_are_kept_for_the_tool_to_refuse() -> None:
    assert parse_arguments("not json {") == {UNPARSED_ARGUMENTS_KEY: "not json {"}
    assert parse_arguments("[1, 2]") == {UNPARSED_ARGUMENTS_KEY: "[1, 2]"}


def test_several_calls_in_a_list_and_openai_style_function_objects() -> None:
    text = json.dumps(
        [
            {"name": "Read", "arguments": {"file_path": "a.py"}},
            {"type": "function", "function": {"name": "Grep", "arguments": '{"pattern": "x"}'}},
        ]
    )

    calls = tool_calls_from_text(text, OFFERED)

    assert [(c.name, c.arguments) for c in calls] == [
        ("Read", {"file_path": "a.py"}),
        ("Grep", {"pattern": "x"}),
    ]
    assert len({c.id for c in calls}) == 2


def test_parameters_key_is_accepted_like_arguments() -> None:
    [call] = tool_calls_from_text('{"name": "Grep", "parameters": {"pattern": "y"}}', OFFERED)

    assert call.arguments == {"pattern": "y"}


def test_prose_json_with_extra_text_or_unknown_tools_is_not_a_call() -> None:
    quoted = "x" * 700 + ' Use {"name": "Read", "arguments": {}} next.'
    assert tool_calls_from_text(quoted, OFFERED) == ()
    assert tool_calls_from_text('{"name": "Bash", "arguments": {}}', OFFERED) == ()
    assert tool_calls_from_text('[{"name": "Read"}, {"name": "Bash"}]', OFFERED) == ()
    assert tool_calls_from_text('{"answer": 42}', OFFERED) == ()
    assert tool_calls_from_text("```json\n{broken\n```", OFFERED) == ()


def test_a_leading_think_block_is_skipped() -> None:
    text = '<think>I should read it.</think>\n{"name": "Read", "arguments": {"file_path": "a"}}'

    [call] = tool_calls_from_text(text, OFFERED)

    assert call.arguments == {"file_path": "a"}


# --- the recorded shapes, the name mapping, echoes (issue 18 item 3) -----------------------

SPECS = Toolbox.specs()
READ_ARGS = {"file_path": "src/click/__init__.py", "offset": 1, "limit": 2000}


@pytest.mark.parametrize(
    ("recording", "seq", "tool"),
    [("ours05", 1, "Read"), ("ours05", 2, "Read"), ("oursLS15tools", 1, "Grep")],
)
def test_the_recorded_calls_written_as_text_are_recovered(
    recording: str, seq: int, tool: str
) -> None:
    [reply] = recorded(recording, [seq])

    reading = read_text_reply(reply.text, SPECS)

    assert [c.name for c in reading.calls] == [tool]
    assert reading.prose == ""


def test_a_made_up_name_with_reads_arguments_is_mapped_to_read() -> None:
    text = json.dumps({"name": "click.ArgumentParser", "arguments": READ_ARGS}) + "}"

    [call] = read_text_reply(text, SPECS).calls

    assert (call.name, call.arguments) == ("Read", READ_ARGS)


def test_an_ambiguous_or_argumentless_unknown_name_is_call_shaped_not_a_call() -> None:
    # {"pattern": ...} fits Grep and Glob alike: no guess, the model gets the tool list.
    ambiguous = read_text_reply('{"name": "search", "arguments": {"pattern": "x"}}', SPECS)
    bare = read_text_reply('{"name": "echo", "arguments": {}}', SPECS)

    assert (ambiguous.calls, ambiguous.call_shaped, ambiguous.unknown_name) == ((), True, "search")
    assert (bare.calls, bare.call_shaped, bare.unknown_name) == ((), True, "echo")


def test_names_differing_in_case_are_the_offered_tool() -> None:
    [call] = read_text_reply('{"name": "read", "arguments": {"file_path": "a"}}', SPECS).calls

    assert call.name == "Read"


@pytest.mark.parametrize("shape", ["bare", "fenced", "tags"])
def test_prose_before_a_call_is_kept_as_prose(shape: Any) -> None:
    text = call_text(WritesCall("Grep", {"pattern": "OptionParser"}, shape, before="Let me look."))

    reading = read_text_reply(text, SPECS)

    assert [c.arguments for c in reading.calls] == [{"pattern": "OptionParser"}]
    assert reading.prose == "Let me look."


def test_several_tagged_calls_and_a_call_cut_short() -> None:
    tags = '<tool_call>{"name": "Read", "arguments": {"file_path": "a"}}</tool_call>\n' * 2
    cut = '{"name": "Read", "arguments": {"file_path": "a"'

    assert [c.name for c in read_text_reply(tags, SPECS).calls] == ["Read", "Read"]
    assert [c.arguments for c in read_text_reply(cut, SPECS).calls] == [{"file_path": "a"}]


def test_an_undecodable_call_is_call_shaped() -> None:
    reading = read_text_reply('```json\n{"name": "Read", "arguments": {file_path: a}\n```', SPECS)

    assert (reading.calls, reading.call_shaped) == ((), True)


def test_echoed_tool_response_blocks_are_flagged_and_left_out_of_the_prose() -> None:
    [echo] = recorded("oursLS15tools", [2])
    mixed = "<tool_response>\nFound 1 file\n</tool_response>\nIt is in src/click/parser.py."

    assert (read_text_reply(echo.text, SPECS).echoed, read_text_reply(echo.text, SPECS).prose) == (
        True,
        "",
    )
    assert read_text_reply(mixed, SPECS).prose == "It is in src/click/parser.py."
    assert read_text_reply("<tool_response>never closed", SPECS).prose == ""


# --- properties: any call in any recorded shape round-trips; any text is read in bounded time

_KEYS = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=12)
_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=300, deadline=None)
@given(
    name=st.sampled_from([s.name for s in SPECS]),
    arguments=st.dictionaries(_KEYS, _VALUES, max_size=4),
    shape=st.sampled_from(["bare", "fenced", "tags"]),
    extra_brace=st.booleans(),
    before=st.sampled_from(["", "I will search.", "Understood. Let's look:"]),
)
def test_any_offered_call_in_any_recorded_shape_round_trips(
    name: str, arguments: dict[str, object], shape: Any, extra_brace: bool, before: str
) -> None:
    text = call_text(WritesCall(name, arguments, shape, extra_brace, before))

    [call] = read_text_reply(text, SPECS).calls

    assert (call.name, dict(call.arguments)) == (name, arguments)


@settings(max_examples=500, deadline=None)
@given(
    st.text(max_size=400) | st.text(alphabet='{}[]"`<>/:,\\ \nnametoolcall_respons', max_size=400)
)
def test_any_text_is_read_without_raising_and_prose_comes_from_it(text: str) -> None:
    reading = read_text_reply(text, SPECS)

    assert not (reading.calls and reading.call_shaped)
    assert len(reading.prose) <= len(text)


ADVERSARIAL = [
    "{" * 200_000,
    "[" * 200_000,
    '{"name": "' * 30_000,
    "<tool_call>" * 30_000,
    "```json\n{" * 30_000,
    "<tool_response>" * 30_000,
    "<think>" + "x" * 300_000,
    '{"name": "Read", "arguments": ' + "[" * 100_000,
]


@pytest.mark.parametrize("text", ADVERSARIAL, ids=lambda t: repr(t[:12]))
def test_adversarial_text_is_read_in_bounded_time(text: str) -> None:
    # The reading looks at TEXT_CALL_MAX_CHARS at most, decodes a bounded number of places,
    # each linear: even on a loaded machine this is milliseconds; 2 s is a generous bound.
    started = time.process_time()
    reading = read_text_reply(text, SPECS)
    elapsed = time.process_time() - started

    assert elapsed < 2.0
    assert reading.calls == ()
    assert len(reading.prose) <= C.TEXT_CALL_MAX_CHARS


def test_work_grows_linearly_with_the_text() -> None:
    # Doubling a pathological reply at most about doubles the CPU time (a quadratic reading
    # would quadruple it); below the cap, so the whole text is examined.
    def cost(n: int) -> float:
        text = '{"name": "x", "arguments": {"a": "' + "{[" * n
        started = time.process_time()
        for _ in range(20):
            read_text_reply(text, SPECS)
        return time.process_time() - started

    small, large = cost(7_000), cost(28_000)
    assert large < 4 * 3 * max(small, 1e-3)


def test_json_data_with_a_name_and_json_quoted_deep_in_an_answer_are_prose() -> None:
    package = '```json\n{"name": "live-memory", "version": "1.0", "private": true}\n```'
    quoted = (
        "The hook sends this payload. " * 30 + '```json\n{"name": "Read", "arguments": {}}\n```'
    )

    for text in (package, quoted, '{"name": "Read"}'):
        reading = read_text_reply(text, SPECS)
        assert (reading.calls, reading.call_shaped, reading.prose) == ((), False, text)
