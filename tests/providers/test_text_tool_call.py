from __future__ import annotations

import json

from live_memory.providers.text_tool_call import (
    UNPARSED_ARGUMENTS_KEY,
    parse_arguments,
    tool_calls_from_text,
)

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
    assert tool_calls_from_text('Use {"name": "Read", "arguments": {}} next.', OFFERED) == ()
    assert tool_calls_from_text('{"name": "Bash", "arguments": {}}', OFFERED) == ()
    assert tool_calls_from_text('[{"name": "Read"}, {"name": "Bash"}]', OFFERED) == ()
    assert tool_calls_from_text('{"answer": 42}', OFFERED) == ()
    assert tool_calls_from_text("```json\n{broken\n```", OFFERED) == ()


def test_a_leading_think_block_is_skipped() -> None:
    text = '<think>I should read it.</think>\n{"name": "Read", "arguments": {"file_path": "a"}}'

    [call] = tool_calls_from_text(text, OFFERED)

    assert call.arguments == {"file_path": "a"}
