"""The Anthropic adapter keeps one HTTP connection across calls: it reads a stream to its end
after `message_stop` (closing a half-read response closed the connection, so every call paid a
new one), after the answer is returned. A server that holds the stream open after
`message_stop` costs the next call a short wait and a fresh connection, never a lost answer,
and the answer itself no wait at all. A proxy named in the environment carries the
call (the request is built once per client; `send` still picks the proxy), and the calls write
no per-request log line.

The server here is a minimal HTTP/1.1 one on loopback, because it must count connections and
hold a finished stream open, which the shared fake (uvicorn) cannot; its events are the shared
fake's own (`fake_anthropic_wire`).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from pathlib import Path

import pytest

from live_memory.config import configure_logging, reset_logging
from live_memory.config import constants as C
from live_memory.providers import AnthropicProvider, ChatRequest, Message, TextBlock
from tests.support.fakes import Text
from tests.support.fakes.fake_anthropic_wire import sse_events
from tests.support.fakes.fake_cache import AnthropicCacheUsage

MODEL = "claude-haiku-4-5"
_IDS = itertools.count(1)


class StreamServer:
    """Answers every POST with one streamed reply; `hold_tail`: never ends the body;
    `release`: ends it once the event is set."""

    def __init__(self, hold_tail: bool, release: asyncio.Event | None = None) -> None:
        self.hold_tail = hold_tail
        self.release = release  # when given, the body's end is sent once it is set
        self.connections = 0
        self.requests = 0
        self.request_lines: list[bytes] = []

    async def __aenter__(self) -> StreamServer:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.server.close()
        await self.server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while head := await reader.readuntil(b"\r\n\r\n"):
                length = next(
                    int(line.split(b":", 1)[1])
                    for line in head.lower().split(b"\r\n")
                    if line.startswith(b"content-length:")
                )
                await reader.readexactly(length)
                self.requests += 1
                self.request_lines.append(head.split(b"\r\n", 1)[0])
                usage = AnthropicCacheUsage(40, 0, 0)
                events = b"".join(
                    sse_events(Text(f"answer {self.requests}"), MODEL, usage, _new_id, empty=False)
                )
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                    b"transfer-encoding: chunked\r\n\r\n%x\r\n%s\r\n" % (len(events), events)
                )
                if self.release is not None:
                    await writer.drain()
                    await self.release.wait()
                if self.hold_tail:
                    await writer.drain()
                    await reader.read()  # until the client closes the connection
                    return
                writer.write(b"0\r\n\r\n")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass  # the client closed the connection
        finally:
            writer.close()


def _new_id(prefix: str) -> str:
    return f"{prefix}_{next(_IDS)}"


def _ask(n: int) -> ChatRequest:
    return ChatRequest(MODEL, (), (Message("user", (TextBlock(f"question {n}"),)),), (), 256)


async def _three_calls(hold_tail: bool) -> tuple[list[str], int, float]:
    async with StreamServer(hold_tail) as server:
        provider = AnthropicProvider(server.url, "test-key")
        started = time.monotonic()
        try:
            answers = [(await provider.chat(_ask(n))).text for n in range(3)]
        finally:
            await provider.aclose()
        return answers, server.connections, time.monotonic() - started


def test_calls_share_one_connection() -> None:
    answers, connections, _ = asyncio.run(_three_calls(hold_tail=False))
    assert answers == ["answer 1", "answer 2", "answer 3"]
    assert connections == 1


def test_a_stream_held_open_after_message_stop_still_answers_on_a_fresh_connection() -> None:
    answers, connections, elapsed = asyncio.run(_three_calls(hold_tail=True))
    assert answers == ["answer 1", "answer 2", "answer 3"]
    assert connections == 3
    assert elapsed >= 3 * C.STREAM_TAIL_WAIT_S  # each waited for the tail, then gave up on it


def test_an_answer_does_not_wait_for_its_streams_tail(monkeypatch: pytest.MonkeyPatch) -> None:
    # The server holds the body's end until the first answer is back: the answer is returned
    # while its tail is still unread (before, the call waited for it, gave up, and closed the
    # connection); the tail is read afterwards and the next call uses the same connection.
    monkeypatch.setattr(C, "STREAM_TAIL_WAIT_S", 30.0)  # a held tail is waited for, not lost

    async def two_calls() -> tuple[str, str, int]:
        release = asyncio.Event()
        async with StreamServer(hold_tail=False, release=release) as server:
            provider = AnthropicProvider(server.url, "test-key")
            try:
                async with asyncio.timeout(10):  # the old way waited 30 s for the tail here
                    first = (await provider.chat(_ask(1))).text
                release.set()
                second = (await provider.chat(_ask(2))).text
            finally:
                await provider.aclose()
            return first, second, server.connections

    assert asyncio.run(two_calls()) == ("answer 1", "answer 2", 1)


def test_provider_calls_log_nothing_at_info(tmp_path: Path) -> None:
    # httpx2 logs every request at INFO: one line per question in the server's log.
    log = tmp_path / "live-memory.log"
    configure_logging("info", log)
    try:
        answers, _, _ = asyncio.run(_three_calls(hold_tail=False))
        logging.getLogger("live_memory.tests").info("the log file works")
    finally:
        reset_logging()
    assert answers == ["answer 1", "answer 2", "answer 3"]
    written = log.read_text(encoding="utf-8")
    assert "the log file works" in written
    assert "HTTP Request" not in written


def test_a_proxy_from_the_environment_carries_the_call(monkeypatch: pytest.MonkeyPatch) -> None:
    # The provider's host does not resolve: only the proxy (this server) can answer.
    for name in ("ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy", "HTTPS_PROXY", "https_proxy"):
        monkeypatch.delenv(name, raising=False)

    async def through_proxy() -> tuple[str, list[bytes]]:
        async with StreamServer(hold_tail=False) as proxy:
            monkeypatch.setenv("HTTP_PROXY", proxy.url)
            provider = AnthropicProvider("http://provider.invalid", "test-key")
            try:
                answer = (await provider.chat(_ask(1))).text
            finally:
                await provider.aclose()
            return answer, proxy.request_lines

    answer, lines = asyncio.run(through_proxy())
    assert answer == "answer 1"
    assert lines == [b"POST http://provider.invalid/v1/messages HTTP/1.1"]
