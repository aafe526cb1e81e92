"""Streamed provider calls against the replaying local-server fake (real HTTP, real SDK).

Giving up on a call must close its stream, so a single-slot local server stops generating
for nobody (a non-streamed request ran 858 s after its caller left, in the recordings).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from live_memory.providers import ChatRequest, Message, StreamTap, SystemBlock, TextBlock
from live_memory.providers.openai_adapter import OpenAIProvider
from tests.support.fakes import FakeLocalServer, Says

LONG_ANSWER = "The ArgumentParser class in src/click/parser.py parses the options. " * 6


def _request(tap: StreamTap | None = None, max_tokens: int = 256) -> ChatRequest:
    return ChatRequest(
        model="qwen",
        system=(SystemBlock("You answer questions about a repository."),),
        messages=(Message("user", (TextBlock("Which class parses options?"),)),),
        tools=(),
        max_tokens=max_tokens,
        tap=tap,
    )


@pytest.fixture(scope="module")
def slow() -> Iterator[FakeLocalServer]:
    # 2 generated tokens a second at pace 1: the long answer streams for about a minute.
    with FakeLocalServer(flavour="llama-server", generate_tps=2.0, prefill_tps=5000.0) as fake:
        fake.pace = 1.0
        yield fake


@pytest.fixture
def fake(slow: FakeLocalServer) -> Iterator[FakeLocalServer]:
    slow.reset()
    yield slow
    slow.reset()


def test_a_streamed_answer_comes_back_whole_with_the_servers_timings() -> None:
    with FakeLocalServer(flavour="llama-server") as fake:
        fake.script(Says("It is ArgumentParser."), Says("Still ArgumentParser."))
        tap = StreamTap()

        async def run() -> tuple[object, object]:
            provider = OpenAIProvider(fake.openai_base_url, None)
            try:
                first = await provider.chat(_request(tap))
                second = await provider.chat(_request())
            finally:
                await provider.aclose()
            return first, second

        first, second = asyncio.run(run())
    assert fake.chat_requests[0].body["stream"] is True
    assert first.text == "It is ArgumentParser." == tap.text  # type: ignore[attr-defined]
    timings = first.timings  # type: ignore[attr-defined]
    assert timings is not None and timings.from_server
    assert timings.cached_tokens == 0 and timings.evaluated_tokens == timings.prompt_tokens
    assert tap.first_token_s is not None
    # Same prompt again: llama-server's slot reuses it (cache_n), reported as cache reads.
    usage = second.usage  # type: ignore[attr-defined]
    assert usage.cache_read_tokens > 0 and usage.cache_unreported_tokens == 0


def test_llama_cpp_python_gives_no_cache_figure_so_its_reuse_stays_unknown() -> None:
    with FakeLocalServer(flavour="llama-cpp-python") as fake:

        async def run() -> object:
            provider = OpenAIProvider(fake.openai_base_url, None)
            try:
                return await provider.chat(_request())
            finally:
                await provider.aclose()

        response = asyncio.run(run())
    usage = response.usage  # type: ignore[attr-defined]
    assert usage.input_tokens > 0 and usage.cache_hit_ratio is None
    timings = response.timings  # type: ignore[attr-defined]
    assert timings is not None and not timings.from_server and timings.first_token_s is not None


def test_an_answer_cut_at_its_cap_is_reported_as_max_tokens() -> None:
    with FakeLocalServer(flavour="llama-server") as fake:
        fake.script(Says("A long answer that the model could not finish", truncated=True))

        async def run() -> object:
            provider = OpenAIProvider(fake.openai_base_url, None)
            try:
                return await provider.chat(_request(max_tokens=8))
            finally:
                await provider.aclose()

        response = asyncio.run(run())
    assert response.stop_reason == "max_tokens"  # type: ignore[attr-defined]
    assert response.raw_stop_reason == "length"  # type: ignore[attr-defined]


def test_cancelling_a_call_closes_the_stream_and_the_server_stops(fake: FakeLocalServer) -> None:
    fake.script(Says(LONG_ANSWER))
    tap = StreamTap()

    async def run() -> None:
        provider = OpenAIProvider(fake.openai_base_url, None)
        try:
            task = asyncio.ensure_future(provider.chat(_request(tap)))
            await asyncio.to_thread(fake.wait_for_requests, 1)
            while not tap.text:  # the first pieces arrived: generation is under way
                await asyncio.sleep(0.01)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
        finally:
            await provider.aclose()

    asyncio.run(run())
    assert fake.wait_idle(30), "the server kept generating after the caller gave up"
    assert fake.closed_early == 1
    assert 0 < len(tap.text) < len(LONG_ANSWER)


def test_a_deadline_inside_the_call_closes_the_stream_too(fake: FakeLocalServer) -> None:
    fake.script(Says(LONG_ANSWER))

    async def run() -> None:
        provider = OpenAIProvider(fake.openai_base_url, None)
        try:
            # The whole answer streams for about a minute; the deadline falls well inside it.
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(provider.chat(_request()), 3.0)
        finally:
            await provider.aclose()

    asyncio.run(run())
    assert fake.wait_idle(30)
    assert fake.closed_early == 1
