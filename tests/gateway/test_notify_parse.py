"""`/notify` bodies: the canonical batch and every raw Claude Code hook payload we receive."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from live_memory.actors.message import FileEvent
from live_memory.config import constants as C
from live_memory.errors import InputError, PayloadTooLarge
from live_memory.gateway.notify_parse import parse_notify
from tests.support.fixtures import HOOK_PAYLOADS

CWD = "/home/dev/project"


@pytest.fixture(scope="module")
def hooks() -> dict[str, dict[str, Any]]:
    payloads = json.loads(HOOK_PAYLOADS.read_text(encoding="utf-8"))
    return {name: entry["stdin"] for name, entry in payloads.items()}


def hook(hooks: dict[str, dict[str, Any]], name: str) -> dict[str, Any]:
    return copy.deepcopy(hooks[name])


# --- the canonical batch -------------------------------------------------------------------
def test_canonical_batch_is_parsed_in_order() -> None:
    body = {
        "cwd": CWD,
        "events": [
            {"path": f"{CWD}/a.py", "kind": "read", "content": "A"},
            {"path": "b.py", "kind": "write", "content": ""},
            {"path": "c.py", "kind": "change"},
            {"path": "d.py", "kind": "add", "content": None},
            {"path": "e.py", "kind": "unlink"},
        ],
    }
    assert parse_notify(body) == (
        CWD,
        [
            FileEvent(f"{CWD}/a.py", "read", "A"),
            FileEvent("b.py", "write", ""),
            FileEvent("c.py", "change"),
            FileEvent("d.py", "add"),
            FileEvent("e.py", "unlink"),
        ],
    )


def test_an_empty_batch_is_valid() -> None:
    assert parse_notify({"cwd": CWD, "events": []}) == (CWD, [])


def test_too_many_events_is_payload_too_large() -> None:
    events = [{"path": f"f{i}.py", "kind": "change"} for i in range(4)]
    assert len(parse_notify({"cwd": CWD, "events": events}, max_events=4)[1]) == 4
    with pytest.raises(
        PayloadTooLarge, match="events: 5 in one batch; LIVE_MEMORY_MAX_NOTIFY_EVENTS is 4"
    ):
        parse_notify({"cwd": CWD, "events": [*events, events[0]]}, max_events=4)


def test_the_default_event_limit_applies() -> None:
    events = [{"path": "a.py", "kind": "change"}] * (C.MAX_NOTIFY_EVENTS + 1)
    with pytest.raises(PayloadTooLarge):
        parse_notify({"cwd": CWD, "events": events})


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ([], "body"),
        ("cwd", "body"),
        (None, "body"),
        ({"events": []}, "cwd"),
        ({"cwd": "", "events": []}, "cwd"),
        ({"cwd": 7, "events": []}, "cwd"),
        ({"cwd": CWD}, "events"),
        ({"cwd": CWD, "events": {"path": "a"}}, "events"),
        ({"cwd": CWD, "events": ["a.py"]}, "events[0]"),
        ({"cwd": CWD, "events": [{"path": "a.py"}]}, "events[0].kind"),
        ({"cwd": CWD, "events": [{"path": "a.py", "kind": "modified"}]}, "events[0].kind"),
        ({"cwd": CWD, "events": [{"path": "a.py", "kind": "READ"}]}, "events[0].kind"),
        ({"cwd": CWD, "events": [{"kind": "read"}]}, "events[0].path"),
        ({"cwd": CWD, "events": [{"path": "", "kind": "read"}]}, "events[0].path"),
        ({"cwd": CWD, "events": [{"path": ["a"], "kind": "read"}]}, "events[0].path"),
        (
            {"cwd": CWD, "events": [{"path": "a", "kind": "change"}, {"path": "b", "kind": "x"}]},
            "events[1].kind",
        ),
        (
            {"cwd": CWD, "events": [{"path": "a", "kind": "read", "content": 12}]},
            "events[0].content",
        ),
        (
            {"cwd": CWD, "events": [{"path": "a", "kind": "read", "content": {"t": "x"}}]},
            "events[0].content",
        ),
    ],
)
def test_malformed_canonical_bodies_raise_input_error_naming_the_field(
    body: object, field: str
) -> None:
    with pytest.raises(InputError) as raised:
        parse_notify(body)
    assert not isinstance(raised.value, PayloadTooLarge)
    assert field in str(raised.value)


# --- raw hook payloads (as the hook received them on stdin) --------------------------------
def test_post_tool_use_read_of_a_whole_file_carries_its_content(
    hooks: dict[str, dict[str, Any]],
) -> None:
    assert parse_notify(hook(hooks, "PostToolUse(Read)")) == (
        CWD,
        [FileEvent(f"{CWD}/input.txt", "read", "hello from input.txt: the answer is 42\n")],
    )


def test_post_tool_use_write_carries_the_written_content(
    hooks: dict[str, dict[str, Any]],
) -> None:
    assert parse_notify(hook(hooks, "PostToolUse(Write)")) == (
        CWD,
        [FileEvent(f"{CWD}/out.txt", "write", "line one\nline two\n")],
    )


def test_post_tool_use_edit_without_content_is_a_modification_hint(
    hooks: dict[str, dict[str, Any]],
) -> None:
    assert parse_notify(hook(hooks, "PostToolUse(Edit)")) == (
        CWD,
        [FileEvent(f"{CWD}/out.txt", "modified", None)],
    )


def test_post_tool_use_edit_with_content_added_by_the_hook_is_a_write(
    hooks: dict[str, dict[str, Any]],
) -> None:
    payload = hook(hooks, "PostToolUse(Edit)")
    payload["content"] = "line one\nline 2 edited\n"
    assert parse_notify(payload)[1] == [
        FileEvent(f"{CWD}/out.txt", "write", "line one\nline 2 edited\n")
    ]


def test_content_added_by_the_hook_wins_for_a_read(hooks: dict[str, dict[str, Any]]) -> None:
    payload = hook(hooks, "PostToolUse(Read)")
    payload["content"] = "the whole file as read from disk\n"
    assert parse_notify(payload)[1][0].content == "the whole file as read from disk\n"


@pytest.mark.parametrize(
    ("name", "kind"), [("FileChanged(add)", "add"), ("FileChanged(change)", "change")]
)
def test_file_changed_payloads_become_change_events(
    hooks: dict[str, dict[str, Any]], name: str, kind: str
) -> None:
    assert parse_notify(hook(hooks, name)) == (CWD, [FileEvent(f"{CWD}/watched.txt", kind)])  # type: ignore[arg-type]


def test_file_changed_unlink_is_a_delete(hooks: dict[str, dict[str, Any]]) -> None:
    payload = hook(hooks, "FileChanged(change)")
    payload["event"] = "unlink"
    assert parse_notify(payload)[1] == [FileEvent(f"{CWD}/watched.txt", "unlink")]


def test_session_start_is_refused_as_not_a_file_notification(
    hooks: dict[str, dict[str, Any]],
) -> None:
    with pytest.raises(InputError, match="hook_event_name 'SessionStart'"):
        parse_notify(hook(hooks, "SessionStart"))


def test_every_fixture_payload_parses_or_is_refused_with_input_error(
    hooks: dict[str, dict[str, Any]],
) -> None:
    outcomes = {}
    for name in hooks:
        try:
            cwd, events = parse_notify(hook(hooks, name))
        except InputError:
            outcomes[name] = "refused"
        else:
            assert cwd == CWD
            outcomes[name] = ",".join(e.kind for e in events)
    assert outcomes == {
        "SessionStart": "refused",
        "PostToolUse(Read)": "read",
        "PostToolUse(Write)": "write",
        "PostToolUse(Edit)": "modified",
        "FileChanged(add)": "add",
        "FileChanged(change)": "change",
    }


@pytest.mark.parametrize(
    "file",
    [
        {"startLine": 5, "numLines": 2, "totalLines": 40},  # read with an offset
        {"startLine": 1, "numLines": 2, "totalLines": 40},  # read with a limit
        {"numLines": 2},  # no total: cannot tell it was whole
        {"startLine": 1, "numLines": "2", "totalLines": 2},
    ],
)
def test_a_partial_read_has_no_content(
    hooks: dict[str, dict[str, Any]], file: dict[str, object]
) -> None:
    payload = hook(hooks, "PostToolUse(Read)")
    payload["tool_input"]["offset"] = 5
    payload["tool_response"]["file"] = {"content": "two lines\n", **file}
    assert parse_notify(payload)[1] == [FileEvent(f"{CWD}/input.txt", "read", None)]


@pytest.mark.parametrize("response", [None, "text", {"type": "text"}, {"file": {"numLines": 1}}])
def test_a_read_without_a_usable_response_has_no_content(
    hooks: dict[str, dict[str, Any]], response: object
) -> None:
    payload = hook(hooks, "PostToolUse(Read)")
    payload["tool_response"] = response
    assert parse_notify(payload)[1] == [FileEvent(f"{CWD}/input.txt", "read", None)]


def test_other_tools_are_accepted_and_ignored(hooks: dict[str, dict[str, Any]]) -> None:
    payload = hook(hooks, "PostToolUse(Read)")
    payload["tool_name"] = "Bash"
    payload["tool_input"] = {"command": "ls"}
    assert parse_notify(payload) == (CWD, [])


def test_multi_edit_and_notebook_edit_are_modifications(hooks: dict[str, dict[str, Any]]) -> None:
    payload = hook(hooks, "PostToolUse(Edit)")
    payload["tool_name"] = "MultiEdit"
    assert parse_notify(payload)[1] == [FileEvent(f"{CWD}/out.txt", "modified")]
    payload["tool_name"] = "NotebookEdit"
    payload["tool_input"] = {"notebook_path": f"{CWD}/nb.ipynb", "new_source": "x"}
    assert parse_notify(payload)[1] == [FileEvent(f"{CWD}/nb.ipynb", "modified")]


@pytest.mark.parametrize(
    ("name", "change", "field"),
    [
        ("PostToolUse(Read)", {"cwd": None}, "cwd"),
        ("PostToolUse(Read)", {"cwd": ""}, "cwd"),
        ("PostToolUse(Read)", {"tool_input": "input.txt"}, "tool_input"),
        ("PostToolUse(Read)", {"tool_input": {}}, "tool_input.file_path"),
        ("PostToolUse(Read)", {"tool_input": {"file_path": 3}}, "tool_input.file_path"),
        ("PostToolUse(Read)", {"content": ["x"]}, "content"),
        (
            "PostToolUse(Write)",
            {"tool_input": {"file_path": "/p/a", "content": 1}},
            "tool_input.content",
        ),
        ("PostToolUse(Edit)", {"hook_event_name": "PreToolUse"}, "hook_event_name"),
        ("PostToolUse(Edit)", {"hook_event_name": None}, "hook_event_name"),
        ("FileChanged(add)", {"event": "rename"}, "event"),
        ("FileChanged(add)", {"event": None}, "event"),
        ("FileChanged(add)", {"file_path": None}, "file_path"),
        ("FileChanged(add)", {"file_path": ""}, "file_path"),
        ("FileChanged(change)", {"cwd": 1}, "cwd"),
    ],
)
def test_malformed_hook_payloads_raise_input_error_naming_the_field(
    hooks: dict[str, dict[str, Any]], name: str, change: dict[str, object], field: str
) -> None:
    payload = hook(hooks, name) | change
    with pytest.raises(InputError) as raised:
        parse_notify(payload)
    assert field in str(raised.value)
