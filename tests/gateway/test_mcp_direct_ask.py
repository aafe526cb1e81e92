"""A plain `ask_live_memory` call answered the direct way (mcp_direct_ask) gives the bytes the
SDK's runner gives for the same call, for every handshake-era protocol version: answers, the
tool's own errors, a timeout and a crash; and the rule choosing the direct way (`ask_call`).
In process, the real MCP server of build_mcp_server in front of a scripted service."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import MutableMapping
from types import SimpleNamespace
from typing import Any

import orjson
import pytest
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from live_memory.agent import Source
from live_memory.errors import InputError
from live_memory.gateway.mcp_direct_ask import ask_call
from live_memory.gateway.mcp_single_call import SingleCall
from live_memory.gateway.mcp_tools import build_mcp_server

SOURCES = (Source("src/app.py", 3, 9, True, True), Source("lib/x.py", None, None, False, False))


class _Service:
    """What the MCP tool and the direct way call: `ask`, scripted by `outcome`."""

    def __init__(self, outcome: str | BaseException) -> None:
        self.outcome = outcome
        self.settings = SimpleNamespace(async_tools=False)
        self.asked: list[tuple[object, object, object]] = []
        self.direct = 0

    async def ask(
        self, question: object, cwd: object, tokens: object = None, progress: object = None
    ) -> SimpleNamespace:
        self.asked.append((question, cwd, tokens))
        if isinstance(self.outcome, BaseException):
            raise self.outcome
        return SimpleNamespace(text=self.outcome, sources=SOURCES)

    async def ask_direct(self, question: object, cwd: object, tokens: object) -> object:
        self.direct += 1  # the direct way's entry; the tool calls `ask`
        return await self.ask(question, cwd, tokens)


async def _answer(single: SingleCall, message: dict[str, Any], version: str) -> bytes:
    app = single.app_for(message, version)
    assert app is not None
    sent: list[MutableMapping[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(event: MutableMapping[str, Any]) -> None:
        sent.append(event)

    scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": [], "query_string": b""}
    await app(scope, receive, send)
    assert sent[0]["status"] == 200
    return bytes(sent[1]["body"])


Asked = list[tuple[object, object, object]]


def _both_ways(
    outcome: str | BaseException, arguments: dict[str, Any], version: str
) -> tuple[bytes, bytes, Asked]:
    async def run() -> tuple[bytes, bytes, Asked]:
        service = _Service(outcome)
        server = build_mcp_server(service)._lowlevel_server  # type: ignore[arg-type]
        async with server.lifespan(server) as state:
            message = {
                "jsonrpc": "2.0",
                "id": "q-7",
                "method": "tools/call",
                "params": {"name": "ask_live_memory", "arguments": arguments},
            }
            direct_way = SingleCall(server, state, ask=service.ask_direct)  # type: ignore[arg-type]
            direct = await _answer(direct_way, message, version)
            assert service.direct == 1
            runner = await _answer(SingleCall(server, state), message, version)
            assert service.direct == 1
        return direct, runner, service.asked

    return asyncio.run(run())


ARGUMENTS = {"question": "where is frobnicate?", "cwd": "/repo"}


@pytest.mark.parametrize("version", HANDSHAKE_PROTOCOL_VERSIONS)
@pytest.mark.parametrize(
    "outcome",
    [
        "answer text\n\n---\n[live-memory: 12 ms]",
        "",
        InputError("cwd must be an absolute path"),
        TimeoutError("no answer within the hard backstop of 130 s"),
        RuntimeError("a secret detail of a crash"),
    ],
    ids=["answer", "empty", "tool-error", "timeout", "crash"],
)
def test_the_direct_way_gives_the_runners_bytes(
    outcome: str | BaseException, version: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    direct, runner, asked = _both_ways(outcome, ARGUMENTS, version)
    assert direct == runner
    assert (
        asked == [("where is frobnicate?", "/repo", 0)] * 2
    )  # both ways asked once (0: the default)
    result = orjson.loads(direct)["result"]
    if isinstance(outcome, RuntimeError):  # a crash's own text stays in the log
        assert "secret" not in direct.decode()
        assert result["content"][0]["text"] == "Error executing tool ask_live_memory"
    assert result["isError"] is isinstance(outcome, BaseException)
    if not isinstance(outcome, BaseException):  # the sources beside the text, both ways
        assert result["structuredContent"]["sources"][0] == {
            "path": "src/app.py",
            "start_line": 3,
            "end_line": 9,
            "checked": True,
            "seen": True,
        }
        assert len(result["structuredContent"]["sources"]) == 2
        assert result["structuredContent"]["text"] == outcome


@pytest.mark.parametrize(
    "arguments",
    [
        {**ARGUMENTS, "max_answer_tokens": 300},
        {**ARGUMENTS, "max_answer_tokens": None},
        {"question": 17, "cwd": ["not", "a", "path"]},  # passed as sent: the service refuses
    ],
    ids=["tokens", "null-tokens", "not-strings"],
)
def test_arguments_reach_the_service_as_sent(arguments: dict[str, Any]) -> None:
    direct, runner, asked = _both_ways("an answer", arguments, "2025-11-25")
    assert direct == runner
    expected = (arguments["question"], arguments["cwd"], arguments.get("max_answer_tokens", 0))
    assert asked == [expected, expected]


def test_the_rule() -> None:
    plain = {"name": "ask_live_memory", "arguments": dict(ARGUMENTS)}
    assert ask_call(plain) == ("where is frobnicate?", "/repo", 0)
    assert ask_call({**plain, "arguments": {**ARGUMENTS, "max_answer_tokens": 9}}) is not None
    # Everything the SDK might treat otherwise goes its way.
    assert ask_call({**plain, "name": "ask_live_memory_submit"}) is None
    assert ask_call({**plain, "_meta": {}}) is None
    assert ask_call({**plain, "arguments": {"question": "q"}}) is None  # cwd missing
    assert ask_call({**plain, "arguments": {**ARGUMENTS, "extra": 1}}) is None
    assert ask_call({**plain, "arguments": ["q", "/repo"]}) is None
    for tokens in ("300", 3.0, True):  # the SDK parses a string as JSON; not ints its way
        assert ask_call({**plain, "arguments": {**ARGUMENTS, "max_answer_tokens": tokens}}) is None
    assert ask_call(None) is None
