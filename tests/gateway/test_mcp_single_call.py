"""A plain `tools/call` (no `_meta`) is answered through the SDK's single-exchange driver, the
same request with `_meta: {}` through the SDK's stateless transport: both answer alike, on
the shared edge server with raw HTTP, for answers, tool errors, bad arguments, an unknown
tool and a malformed call; and the rule choosing the way (`single_call`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from live_memory.gateway.mcp_single_call import single_call
from tests.support import loopback
from tests.support.server_process import ServerProcess

HEADERS = {
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": "2025-11-25",
}


def _post(server: ServerProcess, message: object) -> httpx.Response:
    body = json.dumps(message)
    return loopback.post(f"{server.url}/mcp", content=body, headers=HEADERS, timeout=60)


def _both_ways(server: ServerProcess, params: dict[str, Any]) -> tuple[httpx.Response, ...]:
    plain = {"jsonrpc": "2.0", "id": "q-1", "method": "tools/call", "params": params}
    full = {**plain, "params": {**params, "_meta": {}}}  # any _meta: the SDK's transport
    return _post(server, plain), _post(server, full)


def _answer_shape(reply: dict[str, Any]) -> tuple[object, ...]:
    result = reply["result"]
    text = result["content"][0]["text"]
    return reply["id"], result["isError"], sorted(result), text.split("\n---\n")[0]


def test_an_answer_comes_back_the_same_either_way(
    edge_server: ServerProcess, edge_repo: Path
) -> None:
    params = {"name": "ask_live_memory", "arguments": {"question": "q?", "cwd": str(edge_repo)}}
    single, full = _both_ways(edge_server, params)
    for response in (single, full):
        assert response.status_code == 200, response.text
        assert response.headers["content-type"] == "application/json"
    # The trailer's latency differs between two answers; the rest is the same.
    assert _answer_shape(single.json()) == _answer_shape(full.json())
    assert single.json()["result"]["content"][0]["text"].startswith("edge answer")


@pytest.mark.parametrize(
    "params",
    [
        {"name": "ask_live_memory", "arguments": {"question": "q?", "cwd": "relative"}},
        {"name": "ask_live_memory", "arguments": {"question": "q?"}},
        {
            "name": "ask_live_memory",
            "arguments": {"question": "q?", "cwd": "/", "max_answer_tokens": "x"},
        },
        {"name": "ask_live_memory"},
        {"name": "no_such_tool", "arguments": {}},
        {"name": "ask_live_memory", "arguments": ["not", "an", "object"]},
        {"name": 5, "arguments": {}},
        {"arguments": {}},
    ],
    ids=["tool-error", "missing", "bad-type", "no-arguments", "unknown", "array", "name", "none"],
)
def test_errors_are_the_same_bytes_either_way(
    edge_server: ServerProcess, params: dict[str, Any]
) -> None:
    single, full = _both_ways(edge_server, params)
    assert (single.status_code, single.headers["content-type"]) == (
        full.status_code,
        full.headers["content-type"],
    )
    assert single.content == full.content, (single.text, full.text)


def test_the_rule() -> None:
    headers = [(b"mcp-protocol-version", b"2025-11-25")]
    scope: dict[str, Any] = {"headers": headers}
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x"}}
    assert single_call(call, scope, 100) == "2025-11-25"
    assert single_call({**call, "params": {"name": "x", "_meta": {}}}, scope, 100) is None
    assert single_call({**call, "method": "tools/list"}, scope, 100) is None
    assert single_call({**call, "extra": 1}, scope, 100) is None
    assert single_call([call], scope, 100) is None  # a batch: the SDK's way
    assert single_call({**call, "params": None}, scope, 100) is None
    assert single_call(call, scope, 10**8) is None  # over the SDK's own limit: its 413
    assert single_call(call, {"headers": []}, 100) is None  # no version: the SDK's default
    assert single_call(call, {"headers": headers * 2}, 100) is None
    unknown = {"headers": [(b"mcp-protocol-version", b"2099-01-01")]}
    assert single_call(call, unknown, 100) is None
