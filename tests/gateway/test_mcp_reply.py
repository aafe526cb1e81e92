"""How POST /mcp answers: one JSON body unless the request asked for progress (then an SSE
stream carries the progress notifications before the answer), on the shared edge server with
raw HTTP and with the real `mcp` client; and the rule itself (`reply_as_json`)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from live_memory.config import constants as C
from live_memory.gateway.mcp_reply import reply_as_json
from tests.support import loopback
from tests.support.server_process import ServerProcess

BOTH = b"application/json, text/event-stream"
HEADERS = {"accept": BOTH.decode(), "content-type": "application/json"}


def _call(arguments: dict[str, Any], meta: dict[str, Any] | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "ask_live_memory", "arguments": arguments}
    if meta is not None:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}


def _post(
    server: ServerProcess, message: object, accept: str = HEADERS["accept"]
) -> httpx.Response:
    headers = HEADERS | {"accept": accept}
    return loopback.post(
        f"{server.url}/mcp", content=json.dumps(message), headers=headers, timeout=60
    )


def _events(text: str) -> list[dict[str, Any]]:
    return [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:")]


def test_a_question_without_a_progress_token_gets_one_json_body(
    edge_server: ServerProcess, edge_repo: Path
) -> None:
    response = _post(edge_server, _call({"question": "where?", "cwd": str(edge_repo)}))
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/json"
    reply = response.json()
    assert reply["id"] == 7 and reply["result"]["isError"] is False
    assert reply["result"]["content"][0]["text"].startswith("edge answer")
    # A tool error and a listing are plain JSON too.
    refused = _post(edge_server, _call({"question": "where?", "cwd": "relative/path"})).json()
    assert (
        refused["result"]["isError"] is True
        and "absolute" in refused["result"]["content"][0]["text"]
    )
    listed = _post(edge_server, {"jsonrpc": "2.0", "id": 8, "method": "tools/list"})
    assert listed.headers["content-type"] == "application/json"
    assert [t["name"] for t in listed.json()["result"]["tools"]] == ["ask_live_memory"]


def test_a_question_with_a_progress_token_gets_a_stream_with_its_progress_first(
    edge_server: ServerProcess, edge_repo: Path
) -> None:
    message = _call({"question": "where?", "cwd": str(edge_repo)}, {"progressToken": "p-1"})
    response = _post(edge_server, message)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/event-stream")
    events = _events(response.text)
    progress = [e for e in events if e.get("method") == "notifications/progress"]
    assert progress and all(e["params"]["progressToken"] == "p-1" for e in progress)
    assert events[-1]["id"] == 7
    assert events[-1]["result"]["content"][0]["text"].startswith("edge answer")


def test_a_client_that_does_not_accept_sse_is_still_refused(
    edge_server: ServerProcess, edge_repo: Path
) -> None:
    message = _call({"question": "where?", "cwd": str(edge_repo)})
    response = _post(edge_server, message, accept="application/json")
    assert response.status_code == 406, response.text


async def _ask(url: str, arguments: dict[str, Any], with_progress: bool) -> tuple[str, int]:
    reports: list[float] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        reports.append(done)

    async with (
        streamable_http_client(f"{url}/mcp") as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        callback = progress if with_progress else None
        result = await session.call_tool("ask_live_memory", arguments, progress_callback=callback)
    assert not result.is_error, result
    return "".join(getattr(c, "text", "") for c in result.content), len(reports)


@pytest.mark.parametrize("with_progress", [False, True], ids=["json", "sse"])
def test_the_mcp_client_gets_its_answer_either_way(
    edge_server: ServerProcess, edge_repo: Path, with_progress: bool
) -> None:
    arguments = {"question": "where is answer()?", "cwd": str(edge_repo)}
    text, reports = asyncio.run(_ask(edge_server.url, arguments, with_progress))
    assert text.startswith("edge answer") and "[live-memory]" in text
    assert (reports > 0) is with_progress


def test_the_rule() -> None:
    call = _call({"question": "q", "cwd": "/r"})
    with_token = _call({"question": "q", "cwd": "/r"}, {"progressToken": 3})
    short, long_ = 60.0, C.MCP_JSON_REPLY_MAX_WAIT_S + 1
    assert reply_as_json(call, BOTH, short)
    assert reply_as_json(call, b"*/*", short)
    assert reply_as_json(call, b"application/*;q=0.9, text/*", short)
    assert not reply_as_json(with_token, BOTH, short)
    assert not reply_as_json([call, with_token], BOTH, short)  # a batch: any token streams
    assert reply_as_json([call, call], BOTH, short)
    # A bool is not a token (the SDK reads none), nor is a token outside `_meta`.
    assert reply_as_json(_call({}, {"progressToken": True}), BOTH, short)
    assert reply_as_json({**call, "progressToken": 1}, BOTH, short)
    assert not reply_as_json(None, BOTH, short)  # not JSON: the SDK's own answer
    assert not reply_as_json(call, b"application/json", short)  # left to the 406
    assert not reply_as_json(call, b"text/event-stream", short)
    # A question that may take longer than a client's read timeout keeps the SSE pings.
    assert not reply_as_json(call, BOTH, long_)
