"""The MCP surface as a real `mcp` client sees it, against the shared edge server: what the
server advertises (version, capabilities, tool schema with descriptions and bounds,
annotations) is true, one validation refuses the same values on MCP and REST with the same
message, and malformed JSON-RPC gets a JSON-RPC error that does not echo the caller's input.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

import live_memory
from live_memory.config import constants as C
from tests.support import loopback
from tests.support.server_process import ServerProcess

MCP_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


async def _session(url: str, work: Any) -> Any:
    async with (
        streamable_http_client(f"{url}/mcp") as (read, write),
        ClientSession(read, write) as session,
    ):
        initialized = await session.initialize()
        return await work(session, initialized)


def _surface(url: str) -> tuple[Any, Any]:
    async def work(session: ClientSession, initialized: Any) -> tuple[Any, Any]:
        return initialized, (await session.list_tools()).tools

    result: tuple[Any, Any] = asyncio.run(_session(url, work))
    return result


def _mcp_ask(url: str, arguments: dict[str, Any]) -> tuple[bool, str]:
    async def work(session: ClientSession, initialized: Any) -> Any:
        return await session.call_tool("ask_live_memory", arguments)

    result = asyncio.run(_session(url, work))
    return bool(result.is_error), "".join(getattr(c, "text", "") for c in result.content)


def test_the_server_advertises_its_version_and_only_the_capabilities_it_has(
    edge_server: ServerProcess,
) -> None:
    initialized, tools = _surface(edge_server.url)
    health = loopback.get(f"{edge_server.url}/health", timeout=10).json()
    assert initialized.server_info.name == "live-memory"
    assert initialized.server_info.version == health["version"] == live_memory.__version__
    capabilities = initialized.capabilities
    assert capabilities.tools is not None
    assert (capabilities.prompts, capabilities.resources) == (None, None)
    assert [tool.name for tool in tools] == ["ask_live_memory"]
    tool = tools[0]
    assert tool.annotations.read_only_hint is True
    assert tool.annotations.destructive_hint is False
    assert tool.annotations.open_world_hint is False
    schema = tool.input_schema
    assert sorted(schema["required"]) == ["cwd", "question"]
    for name, spec in schema["properties"].items():
        assert len(spec.get("description", "")) > 20, name
    tokens = schema["properties"]["max_answer_tokens"]
    assert (tokens["type"], tokens["minimum"], tokens["maximum"]) == (
        "integer",
        0,
        C.MAX_ANSWER_TOKENS_CAP,
    )
    # Its default is of its own type (a None default had put `"default": null` beside
    # `"type": "integer"`), and means what the description says 0 means.
    assert tokens["default"] == 0 and "0 or absent: the server default" in tokens["description"]
    assert all(spec.get("default", 0) is not None for spec in schema["properties"].values())
    assert schema["properties"]["question"]["type"] == "string"
    assert "ABSOLUTE" in schema["properties"]["cwd"]["description"]
    output = tool.output_schema  # the answer's sources, beside its text
    assert output is not None and sorted(output["required"]) == ["sources", "text"]


def _published_bounds(url: str) -> tuple[int, int]:
    _, tools = _surface(url)
    spec = tools[0].input_schema["properties"]["max_answer_tokens"]
    return int(spec["minimum"]), int(spec["maximum"])


def _rest_ask(url: str, body: dict[str, Any]) -> httpx.Response:
    return loopback.post(f"{url}/api/ask", json=body, timeout=60)


def _refusals(url: str, repo: Path, value: object) -> tuple[str, str]:
    """(REST error, MCP error) for one max_answer_tokens value; both must refuse it."""
    body = {"question": "how long?", "cwd": str(repo), "max_answer_tokens": value}
    rest = _rest_ask(url, body)
    assert rest.status_code == 422, (value, rest.text)
    is_error, text = _mcp_ask(url, body)
    assert is_error, (value, text)
    return rest.json()["error"], text


def test_one_validation_refuses_the_same_values_on_mcp_and_rest(
    edge_server: ServerProcess, edge_repo: Path
) -> None:
    low, high = _published_bounds(edge_server.url)
    # The schema's own bounds, just outside them, and every JSON type that is not an integer.
    refused: list[object] = [low - 1, high + 1, 10**30, "100", True, False, 1e30, 1.5, 64.0, [64]]
    refused.append({"n": 64})
    for value in refused:
        rest, mcp = _refusals(edge_server.url, edge_repo, value)
        # The same message (the value shown may differ: REST's JSON parser reads 10**30
        # as a float).
        assert "max_answer_tokens" in rest and rest.partition("; got")[0] in mcp, (rest, mcp)
        assert len(rest) < 200, rest
    for value in (low, high, None):  # the bounds themselves pass on both
        body = {"question": "bounds?", "cwd": str(edge_repo), "max_answer_tokens": value}
        assert _rest_ask(edge_server.url, body).status_code == 200
        is_error, text = _mcp_ask(edge_server.url, body)
        assert not is_error, text
    for body in ({"question": 5, "cwd": str(edge_repo)}, {"question": "q?", "cwd": ["/"]}):
        rest = _rest_ask(edge_server.url, body)
        assert rest.status_code == 422, rest.text
        is_error, text = _mcp_ask(edge_server.url, body)
        assert is_error and rest.json()["error"] in text, (rest.text, text)


def test_a_question_that_reads_as_json_is_asked_as_written(
    edge_server: ServerProcess, edge_repo: Path
) -> None:
    # The SDK tries a string argument as JSON unless it is declared `str`: these reached the
    # question's validation as a list and a dict, and MCP refused what REST answered.
    for text in ('["where", "is", "frobnicate"]', '{"where": "frobnicate"}'):
        body = {"question": text, "cwd": str(edge_repo)}
        assert _rest_ask(edge_server.url, body).status_code == 200
        is_error, answer = _mcp_ask(edge_server.url, body)
        assert not is_error, answer


def _rpc(server: ServerProcess, message: object) -> httpx.Response:
    return loopback.post(
        f"{server.url}/mcp", content=json.dumps(message), headers=MCP_HEADERS, timeout=30
    )


@pytest.mark.parametrize("bad_id", [{"a": 1}, [1], 1.5, True, None])
def test_a_request_id_that_is_not_a_string_or_integer_gets_a_jsonrpc_error(
    edge_server: ServerProcess, bad_id: object
) -> None:
    response = _rpc(edge_server, {"jsonrpc": "2.0", "id": bad_id, "method": "tools/list"})
    assert response.status_code == 400, response.text
    reply = response.json()
    assert reply["jsonrpc"] == "2.0" and reply["id"] is None
    assert reply["error"]["code"] == -32600
    assert "id must be a string or an integer" in reply["error"]["message"]


def test_a_huge_method_name_is_refused_without_being_echoed(edge_server: ServerProcess) -> None:
    for message in (
        {"jsonrpc": "2.0", "id": 1, "method": "x" * 100_000},
        [{"jsonrpc": "2.0", "id": 1, "method": "y" * 100_000}],
    ):
        response = _rpc(edge_server, message)
        assert response.status_code == 400, response.text[:200]
        assert len(response.content) < 1000
        assert response.json()["error"]["code"] == -32600
    short_unknown = _rpc(edge_server, {"jsonrpc": "2.0", "id": 2, "method": "no/such"})
    assert "Method not found" in short_unknown.text  # the SDK still answers ordinary ones
