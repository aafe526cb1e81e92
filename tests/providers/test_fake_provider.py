"""The fake itself, driven by the real SDKs (strict response validation on)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import httpx
import openai
import pytest

from tests.support.fakes import Call, Error, FakeProvider, Recorded, Text, ToolUse

if TYPE_CHECKING:
    import anthropic

USER: Any = [{"role": "user", "content": "hi"}]


def with_anthropic(
    fake: FakeProvider, use: Callable[[anthropic.AsyncAnthropic], Awaitable[Any]]
) -> Any:
    # Imported here, not at the top: the SDK's import takes ~2.3 s of CPU, which every xdist
    # worker paid at collection for the few tests of this module that drive it.
    import anthropic  # noqa: PLC0415

    async def run() -> Any:
        client = anthropic.AsyncAnthropic(
            base_url=fake.anthropic_base_url,
            api_key="k",
            max_retries=0,
            _strict_response_validation=True,
        )
        async with client:
            return await use(client)

    return asyncio.run(run())


def with_openai(fake: FakeProvider, use: Callable[[openai.AsyncOpenAI], Awaitable[Any]]) -> Any:
    async def run() -> Any:
        client = openai.AsyncOpenAI(
            base_url=fake.openai_base_url,
            api_key="k",
            max_retries=0,
            _strict_response_validation=True,
        )
        async with client:
            return await use(client)

    return asyncio.run(run())


def test_anthropic_stream_is_assembled_by_the_sdk_stream_helper(fake: FakeProvider) -> None:
    fake.script(
        ToolUse.several(
            Call("Grep", {"pattern": "def main", "glob": "**/*.py"}),
            Call("Read", {"file_path": "src/app.py"}),
            text="Let me search for the entry point first.",
        )
    )

    async def use(client: anthropic.AsyncAnthropic) -> anthropic.types.Message:
        async with client.messages.stream(model="m", max_tokens=100, messages=USER) as stream:
            return await stream.get_final_message()

    message = with_anthropic(fake, use)

    text, grep, read = message.content
    assert text.type == "text" and text.text == "Let me search for the entry point first."
    assert grep.type == "tool_use" and grep.input == {"pattern": "def main", "glob": "**/*.py"}
    assert read.type == "tool_use" and read.input == {"file_path": "src/app.py"}
    assert message.stop_reason == "tool_use"
    assert message.usage.output_tokens > 1


def test_anthropic_stream_sends_the_documented_event_sequence(fake: FakeProvider) -> None:
    fake.script(Text("Hello there, streaming world."))

    async def use(client: anthropic.AsyncAnthropic) -> list[str]:
        stream: Any = await client.messages.create(
            model="m", max_tokens=100, messages=USER, stream=True
        )
        return [event.type async for event in stream]

    sdk_events = with_anthropic(fake, use)
    fake.script(Text("Hello there, streaming world."))
    body = {"model": "m", "max_tokens": 100, "messages": USER, "stream": True}
    with httpx.stream("POST", f"{fake.url}/v1/messages", json=body) as response:
        content_type = response.headers["content-type"]
        wire_events = [
            line.removeprefix("event: ")
            for line in response.iter_lines()
            if line.startswith("event: ")
        ]

    assert content_type.startswith("text/event-stream")
    assert wire_events[:3] == ["message_start", "ping", "content_block_start"]
    assert set(wire_events[3:-3]) == {"content_block_delta"}
    assert wire_events[-3:] == ["content_block_stop", "message_delta", "message_stop"]
    assert sdk_events == [e for e in wire_events if e != "ping"]  # the SDK drops pings


def test_openai_stream_ends_with_usage_and_done(fake: FakeProvider) -> None:
    fake.script(ToolUse("Read", {"file_path": "a.py"}, text="Reading."))

    async def use(client: openai.AsyncOpenAI) -> tuple[str, str, str, Any]:
        stream: Any = await client.chat.completions.create(
            model="m", messages=USER, stream=True, stream_options={"include_usage": True}
        )
        text, arguments, finish, usage = "", "", "", None
        async for chunk in stream:
            if chunk.usage is not None:
                usage = chunk.usage
            for choice in chunk.choices:
                text += choice.delta.content or ""
                for call in choice.delta.tool_calls or []:
                    arguments += call.function.arguments or "" if call.function else ""
                finish = choice.finish_reason or finish
        return text, arguments, finish, usage

    text, arguments, finish, usage = with_openai(fake, use)

    assert text == "Reading."
    assert arguments == '{"file_path":"a.py"}'
    assert finish == "tool_calls"
    assert usage.prompt_tokens > 0
    assert usage.completion_tokens > 0


def test_anthropic_cache_is_written_at_markers_and_read_by_later_requests(
    fake: FakeProvider,
) -> None:
    system: Any = [{"type": "text", "text": "x" * 8000, "cache_control": {"type": "ephemeral"}}]

    async def use(client: anthropic.AsyncAnthropic) -> list[anthropic.types.Usage]:
        out = []
        for question in ("first", "second question"):
            messages: Any = [{"role": "user", "content": question}]
            reply = await client.messages.create(
                model="m", max_tokens=10, system=system, messages=messages
            )
            out.append(reply.usage)
        return out

    first, second = with_anthropic(fake, use)

    written = first.cache_creation_input_tokens
    assert written >= 8000 // 4  # the marked system block, at about 4 characters a token
    assert first.cache_read_input_tokens == 0
    assert (second.cache_read_input_tokens, second.cache_creation_input_tokens) == (written, 0)
    assert second.input_tokens > 0  # the unmarked question after the breakpoint
    stats = fake.cache_stats()
    assert (stats.requests, stats.cached_tokens, stats.cache_write_tokens) == (2, written, written)


def test_openai_cache_needs_a_key_and_counts_in_128_token_steps(fake: FakeProvider) -> None:
    long: Any = [{"role": "system", "content": "y" * 6000}, {"role": "user", "content": "q"}]

    async def use(client: openai.AsyncOpenAI) -> list[tuple[int, int]]:
        usage = []
        for key in (None, None, "ws", "ws"):
            extra: Any = {"prompt_cache_key": key} if key else {}
            reply = await client.chat.completions.create(model="m", messages=long, **extra)
            assert reply.usage and reply.usage.prompt_tokens_details
            details = reply.usage.prompt_tokens_details
            usage.append((reply.usage.prompt_tokens, details.cached_tokens or 0))
        return usage

    (prompt, _), *_ = results = with_openai(fake, use)
    assert prompt > 1500
    assert [cached for _, cached in results] == [0, 0, 0, prompt - prompt % 128]


def test_responder_answers_when_the_script_is_empty(fake: FakeProvider) -> None:
    seen: list[Recorded] = []

    def respond(recorded: Recorded) -> Text:
        seen.append(recorded)
        return Text(f"echo {recorded.body['messages'][-1]['content']}")

    fake.script(Text("scripted"))
    fake.responder = respond

    async def use(client: openai.AsyncOpenAI) -> list[str | None]:
        replies = [await client.chat.completions.create(model="m", messages=USER) for _ in range(2)]
        return [r.choices[0].message.content for r in replies]

    assert with_openai(fake, use) == ["scripted", "echo hi"]
    assert [r.wire for r in seen] == ["openai"]


def test_errors_use_each_wire_format_and_retry_after(fake: FakeProvider) -> None:
    import anthropic  # noqa: PLC0415 (see with_anthropic)

    fake.script(Error.rate_limited(retry_after_s=3), Error.overloaded())

    async def anthropic_call(client: anthropic.AsyncAnthropic) -> None:
        await client.messages.create(model="m", max_tokens=10, messages=USER)

    with pytest.raises(anthropic.RateLimitError) as limited:
        with_anthropic(fake, anthropic_call)

    async def openai_call(client: openai.AsyncOpenAI) -> None:
        await client.chat.completions.create(model="m", messages=USER)

    with pytest.raises(openai.InternalServerError) as overloaded:
        with_openai(fake, openai_call)

    assert limited.value.response.headers["retry-after"] == "3"
    assert limited.value.type == "rate_limit_error"
    assert overloaded.value.status_code == 529


def test_fake_refuses_what_real_servers_refuse(fake: FakeProvider) -> None:
    import anthropic  # noqa: PLC0415 (see with_anthropic)

    marked: Any = {"type": "text", "text": "t", "cache_control": {"type": "ephemeral"}}

    async def too_many_markers(client: anthropic.AsyncAnthropic) -> None:
        await client.messages.create(model="m", max_tokens=10, system=[marked] * 5, messages=USER)

    with pytest.raises(anthropic.BadRequestError, match="maximum of 4 blocks"):
        with_anthropic(fake, too_many_markers)

    async def null_content(client: openai.AsyncOpenAI) -> None:
        messages: Any = [*USER, {"role": "assistant", "content": None}, *USER]
        await client.chat.completions.create(model="m", messages=messages)

    with pytest.raises(openai.BadRequestError, match="must not be null"):
        with_openai(fake, null_content)


def test_waiting_for_requests_is_bounded(fake: FakeProvider) -> None:
    with pytest.raises(TimeoutError, match="0 of 1"):
        fake.wait_for_requests(1, timeout_s=0.05)
