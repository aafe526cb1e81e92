"""Property tests: whatever a caller sends, the edge answers clearly and the jail holds.

Example counts (each `settings(max_examples=...)`, deadline off):
- parse_notify on arbitrary JSON-like values: 500, plus 400 on hook-shaped payloads;
- the path jail with symlinks made per example: 300, arbitrary unicode and NUL paths: 500;
- the in-process app, arbitrary JSON bodies at /notify, /api/ask, /reset, /clear: 400;
- the in-process app, arbitrary `ask_live_memory` arguments over /mcp: 300.
tests/tools/test_jail_properties.py already holds the jail on fixed symlinks (300 + 150); the
jail properties here add what it lacks: links chosen by hypothesis, a symlinked root,
surrogates and NUL bytes, and the round trip through `relative_to_root`.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from live_memory.actors.message import FileEvent
from live_memory.config import load_settings
from live_memory.errors import InputError, PathOutsideWorkspace, PayloadTooLarge
from live_memory.gateway import create_app
from live_memory.gateway.notify_parse import HOOK_TOOLS, parse_notify
from live_memory.tools import resolve_in_root
from live_memory.tools.jail import relative_to_root

EVENT_KINDS = ("read", "write", "change", "add", "unlink", "modified")
MCP_HEADERS = {"accept": "application/json, text/event-stream"}

# --- JSON-like values ----------------------------------------------------------------------
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()
    | st.text(max_size=30)
)
ANY_VALUE = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner),
    max_leaves=20,
)
JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30)
)
JSON_VALUE = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner),
    max_leaves=20,
)


def _mostly(good: st.SearchStrategy[Any], bad: st.SearchStrategy[Any] = ANY_VALUE) -> Any:
    """A field's value: usually plausible, sometimes anything at all."""
    return st.one_of(good, good, bad)


PATH_TEXT = st.sampled_from(["src/app.py", "../../etc/passwd", "/etc/passwd", "", "a\x00b"])
EVENT = st.fixed_dictionaries(
    {},
    optional={
        "path": _mostly(PATH_TEXT | st.text(max_size=20)),
        "kind": _mostly(st.sampled_from(EVENT_KINDS)),
        "content": _mostly(st.none() | st.text(max_size=40)),
    },
)
CANONICAL = st.fixed_dictionaries(
    {},
    optional={
        "cwd": _mostly(st.sampled_from(["/tmp", "rel/dir", ""]) | st.text(max_size=20)),
        "events": _mostly(st.lists(_mostly(EVENT), max_size=6)),
    },
)
HOOK = st.fixed_dictionaries(
    {
        "hook_event_name": _mostly(st.sampled_from(["PostToolUse", "FileChanged", "SessionStart"])),
    },
    optional={
        "cwd": _mostly(st.just("/tmp") | st.text(max_size=20)),
        "tool_name": _mostly(st.sampled_from([*sorted(HOOK_TOOLS), "Bash", "Grep"])),
        "tool_input": _mostly(
            st.fixed_dictionaries(
                {},
                optional={
                    "file_path": _mostly(PATH_TEXT),
                    "notebook_path": _mostly(PATH_TEXT),
                    "content": _mostly(st.text(max_size=20)),
                },
            )
        ),
        "tool_response": _mostly(
            st.fixed_dictionaries(
                {},
                optional={
                    "file": _mostly(
                        st.fixed_dictionaries(
                            {},
                            optional={
                                "content": _mostly(st.text(max_size=20)),
                                "totalLines": _mostly(st.integers(-2, 5)),
                                "numLines": _mostly(st.integers(-2, 5)),
                                "startLine": _mostly(st.integers(-2, 5)),
                            },
                        )
                    )
                },
            )
        ),
        "content": _mostly(st.none() | st.text(max_size=20)),
        "event": _mostly(st.sampled_from(["add", "change", "unlink", "rename"])),
        "file_path": _mostly(PATH_TEXT),
    },
)


# --- the /notify and hook-payload parser ----------------------------------------------------
def _check_parse(body: object, max_events: int | None = None) -> None:
    try:
        if max_events is None:
            cwd, events = parse_notify(body)
        else:
            cwd, events = parse_notify(body, max_events=max_events)
    except (InputError, PayloadTooLarge) as exc:
        assert str(exc)  # a refusal always says what is wrong
        return
    assert isinstance(cwd, str) and cwd
    for event in events:
        assert isinstance(event, FileEvent)
        assert isinstance(event.path, str) and event.path
        assert event.kind in EVENT_KINDS
        assert event.content is None or isinstance(event.content, str)
    if max_events is not None:
        assert len(events) <= max(max_events, 1)


@settings(max_examples=500, deadline=None)
@given(st.one_of(ANY_VALUE, CANONICAL), st.none() | st.integers(0, 4))
def test_parse_notify_raises_only_input_errors_on_arbitrary_values(
    body: object, max_events: int | None
) -> None:
    _check_parse(body, max_events)


@settings(max_examples=400, deadline=None)
@given(HOOK)
def test_parse_notify_raises_only_input_errors_on_hook_shaped_payloads(body: object) -> None:
    _check_parse(body)


# --- the path jail ---------------------------------------------------------------------------
LINK_NAMES = ("l0", "l1", "l2", "l3")
LINK_TARGETS = st.sampled_from(
    [
        "..",
        "../..",
        "../outside",
        "../outside/secret.txt",
        "/",
        "/etc",
        ".",
        "sub",
        "sub/..",
        "sub/../..",
        "l0",
        "l1",
        "l2",
        "l3",
        "missing",
        "../root",
        "../root/../outside",
    ]
)
LINK_SEGMENTS = st.sampled_from(
    [*LINK_NAMES, "..", ".", "", "sub", "secret.txt", "outside", "root", "x"]
)
JAIL_PATHS = st.one_of(
    st.lists(LINK_SEGMENTS, max_size=7).map("/".join),
    st.lists(LINK_SEGMENTS, max_size=7).map(lambda parts: "/" + "/".join(parts)),
    st.builds(
        lambda parts, base: base + "/" + "/".join(parts),
        st.lists(LINK_SEGMENTS, max_size=5),
        st.sampled_from(["{root}", "{base}", "{link_root}"]),
    ),
)


def _inside(path: str, real_root: str) -> bool:
    return path == real_root or path.startswith(real_root.rstrip(os.sep) + os.sep)


def _check_jail(root: Path, user_path: str) -> None:
    real_root = os.path.realpath(root)
    # The oracle: where the OS itself says the path leads. Inside must be accepted (the jail
    # must not refuse real workspace files), outside must be refused.
    lands_inside = _inside(os.path.realpath(os.path.join(real_root, user_path)), real_root)
    try:
        resolved = resolve_in_root(root, user_path)
    except PathOutsideWorkspace:
        assert not lands_inside, user_path
        return
    assert lands_inside, user_path
    assert _inside(str(resolved), real_root), (user_path, resolved)
    assert os.path.realpath(resolved) == str(resolved)  # nothing left to resolve
    rel = relative_to_root(root, resolved)
    assert not rel.startswith(".."), rel
    assert os.path.normpath(os.path.join(real_root, rel)) == str(resolved)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.dictionaries(st.sampled_from(LINK_NAMES), LINK_TARGETS, max_size=4),
    st.lists(JAIL_PATHS, min_size=1, max_size=6),
    st.booleans(),
)
def test_the_jail_holds_against_symlinks_chosen_by_hypothesis(
    links: dict[str, str], paths: list[str], through_link: bool
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        root = base / "root"
        (root / "sub").mkdir(parents=True)
        (root / "sub" / "inside.txt").write_text("inside\n", encoding="utf-8")
        (base / "outside").mkdir()
        (base / "outside" / "secret.txt").write_text("OUTSIDE\n", encoding="utf-8")
        for name, target in links.items():
            os.symlink(target, root / name)
            os.symlink(target, root / "sub" / name)
        os.symlink(root, base / "link_root")
        given_root = base / "link_root" if through_link else root  # a symlinked root resolves
        for template in paths:
            user_path = template.format(root=root, base=base, link_root=base / "link_root")
            _check_jail(given_root, user_path)


@pytest.fixture(scope="module")
def plain_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("jail-plain") / "root"
    (root / "a").mkdir(parents=True)
    return root


@settings(max_examples=500, deadline=None)
@given(
    st.one_of(
        st.text(st.characters(exclude_categories=()), max_size=40),  # surrogates included
        st.text(max_size=40).map(lambda s: s + "\x00"),
        st.lists(st.sampled_from(["..", "a", "\x00", "\udcff", "é", "/", "~"]), max_size=8).map(
            "".join
        ),
    )
)
def test_the_jail_refuses_or_contains_any_unicode_path(plain_root: Path, user_path: str) -> None:
    try:
        resolved = resolve_in_root(plain_root, user_path)
    except PathOutsideWorkspace:
        return
    assert "\x00" not in user_path
    assert _inside(str(resolved), os.path.realpath(plain_root))


# --- the in-process app ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ws") / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def answer():\n    return 42\n", encoding="utf-8")
    (root / "file.txt").write_text("not a directory\n", encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    data = tmp_path_factory.mktemp("data")
    # No provider: a valid question is refused with 503 NoProviderConfigured, no model call.
    app_settings = load_settings({"LIVE_MEMORY_DATA_DIR": str(data), "HOME": str(data)})
    app = create_app(app_settings, environ={})
    with TestClient(
        app, base_url="http://127.0.0.1:8000", raise_server_exceptions=False
    ) as test_client:
        yield test_client


ANY_JSON_NO_STR = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=8,
)


def _cwds(workspace: Path) -> st.SearchStrategy[Any]:
    known = [
        str(workspace),
        str(workspace / "src"),
        str(workspace / "file.txt"),
        str(workspace / "missing"),
        str(workspace) + "/../project",
        "relative/path",
        "",
        " ",
        str(workspace) + "\x00",
    ]
    # Arbitrary text never names a real directory outside the test's own (an absolute
    # existing directory would become a workspace and be walked).
    text = st.text(max_size=30).filter(lambda s: not (os.path.isabs(s) and os.path.exists(s)))
    return st.one_of(st.sampled_from(known), st.sampled_from(known), text, ANY_JSON_NO_STR)


def _bodies(workspace: Path) -> st.SearchStrategy[bytes]:
    cwd = _cwds(workspace)
    tokens = st.one_of(
        st.none(),
        st.integers(min_value=-(2**64), max_value=2**64),
        st.floats(allow_nan=False, allow_infinity=False),
        JSON_VALUE,
    )
    shaped = st.fixed_dictionaries(
        {},
        optional={
            "cwd": cwd,
            "question": _mostly(st.text(max_size=40), JSON_VALUE),
            "max_answer_tokens": tokens,
            "events": _mostly(st.lists(_mostly(EVENT, JSON_VALUE), max_size=4), JSON_VALUE),
            "hook_event_name": st.sampled_from(["PostToolUse", "FileChanged", "Stop"]),
            "tool_name": _mostly(st.sampled_from(sorted(HOOK_TOOLS)), JSON_VALUE),
            "tool_input": JSON_VALUE,
            "event": JSON_VALUE,
        },
    )
    as_json = st.one_of(shaped, shaped, JSON_VALUE).map(
        lambda value: json.dumps(value).encode()  # ensure_ascii: lone surrogates stay escapes
    )
    return st.one_of(as_json, as_json, as_json, st.binary(max_size=60))


def _check_answer(response: Any, where: str) -> None:
    status = response.status_code
    if 200 <= status < 300:
        return
    assert status < 500 or status == 503, (where, status, response.text)
    payload = response.json()
    assert isinstance(payload, dict) and isinstance(payload.get("error"), str), response.text
    assert payload["error"], response.text
    if status == 503:  # the one 5xx by design here: no provider is configured
        assert payload.get("kind") == "NoProviderConfigured", (where, response.text)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_arbitrary_bodies_get_2xx_or_a_clear_4xx_and_never_crash_the_server(
    client: TestClient, workspace: Path, data: st.DataObject
) -> None:
    path = data.draw(st.sampled_from(["/notify", "/api/ask", "/reset", "/clear"]), label="path")
    body = data.draw(_bodies(workspace), label="body")
    response = client.post(path, content=body, headers={"content-type": "application/json"})
    _check_answer(response, path)
    assert client.get("/health").status_code == 200  # still serving


def _mcp_messages(response: Any) -> list[dict[str, Any]]:
    """The JSON-RPC messages of a reply: one JSON body, or an SSE stream's events."""
    if response.headers["content-type"] == "application/json":
        return [response.json()]
    lines = response.text.splitlines()
    return [json.loads(line.removeprefix("data:")) for line in lines if line.startswith("data:")]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_arbitrary_mcp_tool_arguments_get_a_result_or_a_jsonrpc_error(
    client: TestClient, workspace: Path, data: st.DataObject
) -> None:
    arguments = data.draw(
        st.one_of(
            st.fixed_dictionaries(
                {},
                optional={
                    "question": _mostly(st.text(max_size=40), JSON_VALUE),
                    "cwd": _cwds(workspace),
                    "max_answer_tokens": _mostly(st.integers(-(2**64), 2**64), JSON_VALUE),
                    "extra": JSON_VALUE,
                },
            ),
            JSON_VALUE,
        ),
        label="arguments",
    )
    name = data.draw(st.sampled_from(["ask_live_memory", "ask_live_memory", "no_such_tool"]))
    request = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }
    response = client.post(
        "/mcp",
        content=json.dumps(request).encode(),
        headers=MCP_HEADERS | {"content-type": "application/json"},
    )
    assert response.status_code < 500, response.text
    if response.status_code >= 400:
        assert "error" in response.json(), response.text
        return
    messages = _mcp_messages(response)
    assert len(messages) == 1, response.text
    reply = messages[0]
    assert reply.get("id") == 7
    if "error" in reply:
        assert isinstance(reply["error"].get("message"), str)
        return
    result = reply["result"]
    assert result.get("isError") is True, result  # no provider: nothing can be answered
    assert result["content"][0]["text"]
    assert client.get("/health").status_code == 200
