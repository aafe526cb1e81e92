"""The replaying local-server fake itself, driven by the real openai SDK and real HTTP."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import openai
import pytest

from tests.support import loopback
from tests.support.fakes import (
    CopiesLastAssistant,
    CopiesObservation,
    EchoesToolResult,
    FakeLocalServer,
    Says,
    Structured,
    WritesCall,
    recorded,
)

TOOLS: Any = [
    {
        "type": "function",
        "function": {
            "name": "Read",
            "description": "Read a file",
            "parameters": {"type": "object", "properties": {"file_path": {"type": "string"}}},
        },
    }
]
QUESTION: Any = [
    {"role": "system", "content": "You answer questions about a repository."},
    {"role": "user", "content": "Which class parses options?"},
]


@pytest.fixture(scope="module")
def server() -> Iterator[FakeLocalServer]:
    with FakeLocalServer(flavour="llama-server", n_ctx=4096) as fake:
        yield fake


@pytest.fixture
def fake(server: FakeLocalServer) -> Iterator[FakeLocalServer]:
    server.reset()
    yield server
    server.reset()


def with_openai(url: str, use: Callable[[openai.AsyncOpenAI], Awaitable[Any]]) -> Any:
    async def run() -> Any:
        client = openai.AsyncOpenAI(
            base_url=url, api_key="no-key", max_retries=0, _strict_response_validation=True
        )
        async with client:
            return await use(client)

    return asyncio.run(run())


def ask(fake: FakeLocalServer, messages: Any = QUESTION, **extra: Any) -> Any:
    async def use(client: openai.AsyncOpenAI) -> Any:
        return await client.chat.completions.create(
            model="m", messages=messages, tools=TOOLS, max_tokens=64, **extra
        )

    return with_openai(fake.openai_base_url, use)


def test_a_call_written_as_text_comes_back_as_content_without_tool_calls(
    fake: FakeLocalServer,
) -> None:
    fake.script(WritesCall("click.ArgumentParser", {"file_path": "src/click/core.py"}, "fenced"))
    reply = ask(fake, tool_choice="required")
    message = reply.choices[0].message
    assert message.tool_calls is None
    assert message.content.startswith("```json\n{")
    assert '"name": "click.ArgumentParser"' in message.content
    assert fake.chat_requests[0].body["tool_choice"] == "required"  # accepted, then ignored


def test_echo_repeats_the_latest_tool_result_in_tool_response_tags(fake: FakeLocalServer) -> None:
    fake.script(EchoesToolResult())
    messages = [
        *QUESTION,
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "Read", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "Found 1 file\nsrc/click/parser.py"},
    ]
    content = ask(fake, messages).choices[0].message.content
    assert content == "<tool_response>\nFound 1 file\nsrc/click/parser.py\n</tool_response>"


def test_imitations_copy_the_previous_ack_and_the_observation_heading(
    fake: FakeLocalServer,
) -> None:
    fake.script(CopiesLastAssistant(), CopiesObservation())
    messages = [
        QUESTION[0],
        {"role": "user", "content": "[observation] Changes in the workspace:\n### a.py"},
        {"role": "assistant", "content": "Noted."},
        {"role": "user", "content": "Question: where is echo?"},
    ]
    assert ask(fake, messages).choices[0].message.content == "Noted."
    second = ask(fake, messages).choices[0]
    assert second.message.content.startswith("[observation] Changes in the workspace:\n###")
    assert second.finish_reason == "length"


def test_the_slot_reuses_the_common_prefix_and_reports_it_in_timings(
    fake: FakeLocalServer,
) -> None:
    fake.script(Says("first"), Says("second"))
    first = ask(fake)
    longer = [
        *QUESTION,
        {"role": "assistant", "content": "first"},
        {"role": "user", "content": "more"},
    ]
    second = ask(fake, longer)
    assert first.model_extra["timings"]["cache_n"] == 0
    timings = second.model_extra["timings"]
    assert 0 < timings["cache_n"] < second.usage.prompt_tokens
    assert timings["cache_n"] + timings["prompt_n"] == second.usage.prompt_tokens
    assert second.usage.prompt_tokens_details.cached_tokens == timings["cache_n"]


def test_a_structured_reply_and_recorded_replies_replay(fake: FakeLocalServer) -> None:
    fake.script(Structured("Read", {"file_path": "a.py"}), *recorded("oursLS15tools", [2]))
    call = ask(fake).choices[0].message.tool_calls[0]
    assert (call.function.name, call.function.arguments) == ("Read", '{"file_path":"a.py"}')
    echoed = ask(fake).choices[0].message.content
    assert echoed.startswith("<tool_response>\nFound 1 file")


def test_a_prompt_past_the_context_is_refused_like_llama_server(fake: FakeLocalServer) -> None:
    huge: Any = [{"role": "user", "content": "x" * 20_000}]
    with pytest.raises(openai.BadRequestError, match="exceeds the available context size"):
        ask(fake, huge)


def test_streams_carry_timings_and_a_client_that_leaves_is_counted() -> None:
    with FakeLocalServer(flavour="llama-server", pace=0.05, generate_tps=5.0) as fake:
        fake.script(Says("word " * 40), Says("word " * 400))

        async def whole(client: openai.AsyncOpenAI) -> list[Any]:
            stream = await client.chat.completions.create(
                model="m", messages=QUESTION, max_tokens=500, stream=True
            )
            return [chunk async for chunk in stream]

        chunks = with_openai(fake.openai_base_url, whole)
        assert "".join(c.choices[0].delta.content or "" for c in chunks) == "word " * 40
        assert chunks[-1].model_extra["timings"]["predicted_n"] > 0

        async def leave_early(client: openai.AsyncOpenAI) -> None:
            stream = await client.chat.completions.create(
                model="m", messages=QUESTION, max_tokens=500, stream=True
            )
            async for _ in stream:
                break
            await stream.close()

        with_openai(fake.openai_base_url, leave_early)
        assert fake.wait_idle()
        assert fake.closed_early == 1


@pytest.mark.parametrize(
    ("flavour", "path", "key"),
    [
        ("llama-server", "/props", "default_generation_settings"),
        ("llama-server", "/slots", None),
        ("vllm", "/v1/models", "data"),
        ("lm-studio", "/api/v0/models", "data"),
    ],
)
def test_each_flavour_answers_its_probe_routes(flavour: Any, path: str, key: str | None) -> None:
    with FakeLocalServer(flavour=flavour, n_ctx=8192) as fake:
        body = loopback.get(fake.url + path, timeout=10).json()
    if flavour == "llama-server" and key:
        assert body[key]["n_ctx"] == 8192
    elif flavour == "llama-server":
        assert body == [{"id": 0, "n_ctx": 8192, "is_processing": False}]
    elif flavour == "vllm":
        assert body["data"][0]["max_model_len"] == 8192
    else:
        assert body["data"][0]["loaded_context_length"] == 8192


def test_ollama_show_and_llama_cpp_python_have_no_llama_server_routes() -> None:
    with FakeLocalServer(flavour="ollama", n_ctx=4096) as fake:
        shown = loopback.post(fake.url + "/api/show", json={"model": "m"}, timeout=10).json()
        assert shown["parameters"].split() == ["num_ctx", "4096"]
    with FakeLocalServer(flavour="llama-cpp-python") as fake:
        assert loopback.get(fake.url + "/props", timeout=10).status_code == 404
        fake.script(Says("answer"))
        reply = ask(fake)
        assert reply.usage.prompt_tokens_details is None
        assert "timings" not in (reply.model_extra or {})
