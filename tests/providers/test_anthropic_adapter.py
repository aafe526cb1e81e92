from __future__ import annotations

import asyncio

from live_memory.providers import (
    AnthropicProvider,
    ChatRequest,
    ChatResponse,
    Message,
    SystemBlock,
    TextBlock,
    ToolCall,
    ToolResultBlock,
    ToolSpec,
)
from tests.support.fakes import Call, FakeProvider, Text, ToolUse

READ = ToolSpec(
    "Read",
    "Read a file",
    {"type": "object", "properties": {"file_path": {"type": "string"}}, "required": ["file_path"]},
)
MODEL = "claude-haiku-4-5"


def ask(question: str, **kwargs: object) -> ChatRequest:
    fields: dict[str, object] = {
        "model": MODEL,
        "system": (SystemBlock("You answer questions about a repo.", cache_breakpoint=True),),
        "messages": (Message("user", (TextBlock(question),)),),
        "tools": (READ,),
        "max_tokens": 512,
    }
    fields.update(kwargs)
    return ChatRequest(**fields)  # type: ignore[arg-type]


def chat(fake: FakeProvider, *requests: ChatRequest, **options: object) -> list[ChatResponse]:
    async def run() -> list[ChatResponse]:
        provider = AnthropicProvider(fake.anthropic_base_url, "test-key", **options)  # type: ignore[arg-type]
        try:
            return [await provider.chat(r) for r in requests]
        finally:
            await provider.aclose()

    return asyncio.run(run())


def test_text_answer_comes_back_with_end_turn_and_usage(fake: FakeProvider) -> None:
    fake.script(Text("It lives in src/app.py."))

    [response] = chat(fake, ask("Where is the app?"))

    assert response.text == "It lives in src/app.py."
    assert response.stop_reason == "end_turn"
    assert response.tool_calls == ()
    assert response.usage.input_tokens > 0
    assert response.usage.output_tokens > 0
    assert response.model == MODEL


def test_request_carries_system_messages_tools_and_bearer_key(fake: FakeProvider) -> None:
    chat(fake, ask("hi"))

    [recorded] = fake.requests
    assert recorded.path == "/v1/messages"
    assert recorded.wire == "anthropic"
    assert recorded.headers["authorization"] == "Bearer test-key"
    assert recorded.body["system"][0]["text"] == "You answer questions about a repo."
    assert recorded.body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]}
    ]
    assert recorded.body["tools"] == [
        {
            "name": READ.name,
            "description": READ.description,
            "input_schema": dict(READ.input_schema),
        }
    ]
    assert recorded.body["max_tokens"] == 512


def test_tool_use_round_trip_sends_results_back_as_tool_result_blocks(fake: FakeProvider) -> None:
    fake.script(
        ToolUse.several(Call("Read", {"file_path": "a.py"}), Call("Read", {"file_path": "b.py"})),
        Text("Both files define main()."),
    )
    first_request = ask("What do a.py and b.py do?")
    [first] = chat(fake, first_request)
    assert first.stop_reason == "tool_use"
    calls = first.tool_calls
    assert [c.arguments for c in calls] == [{"file_path": "a.py"}, {"file_path": "b.py"}]

    follow_up = ask(
        "unused",
        messages=(
            *first_request.messages,
            Message("assistant", first.blocks),
            Message(
                "user",
                (
                    ToolResultBlock(calls[0].id, "def main(): ..."),
                    ToolResultBlock(calls[1].id, "no such file", is_error=True),
                ),
            ),
        ),
    )
    [second] = chat(fake, follow_up)

    assert second.text == "Both files define main()."
    sent = fake.requests[1].body["messages"]
    assert sent[1]["content"][0] == {
        "type": "tool_use",
        "id": calls[0].id,
        "name": "Read",
        "input": {"file_path": "a.py"},
    }
    assert sent[2]["content"] == [
        {"type": "tool_result", "tool_use_id": calls[0].id, "content": "def main(): ..."},
        {
            "type": "tool_result",
            "tool_use_id": calls[1].id,
            "content": "no such file",
            "is_error": True,
        },
    ]


def test_breakpoints_mark_system_blocks_and_the_last_block_of_flagged_messages(
    fake: FakeProvider,
) -> None:
    call = ToolCall("toolu_1", "Read", {"file_path": "a.py"})
    request = ask(
        "q",
        system=(SystemBlock("prompt + tree", True), SystemBlock("ledger", True)),
        messages=(
            Message("user", (TextBlock("first question"),)),
            Message("assistant", (TextBlock("looking"), call)),
            Message("user", (ToolResultBlock("toolu_1", "contents"),), cache_breakpoint=True),
            Message("assistant", (TextBlock("answer"),)),
            Message("user", (TextBlock("next question"),)),
        ),
        cache_ttl="1h",
    )
    chat(fake, request)

    body = fake.requests[0].body
    marker = {"type": "ephemeral", "ttl": "1h"}
    assert [b.get("cache_control") for b in body["system"]] == [marker, marker]
    marked = [
        (i, j)
        for i, message in enumerate(body["messages"])
        for j, block in enumerate(message["content"])
        if "cache_control" in block
    ]
    assert marked == [(2, 0)]


def test_more_than_four_breakpoints_keep_only_the_last_four(fake: FakeProvider) -> None:
    request = ask(
        "q",
        system=(SystemBlock("s1", True), SystemBlock("s2", True)),
        messages=(
            Message("user", (TextBlock("u1"),), cache_breakpoint=True),
            Message("assistant", (TextBlock("a1"),), cache_breakpoint=True),
            Message("user", (TextBlock("u2"),), cache_breakpoint=True),
            Message("assistant", (TextBlock("a2"),)),
            Message("user", (TextBlock("u3"),)),
        ),
    )
    [response] = chat(fake, request)  # the fake refuses more than 4, as the real API does

    body = fake.requests[0].body
    assert response.stop_reason == "end_turn"
    assert [("cache_control" in b) for b in body["system"]] == [False, True]
    assert [("cache_control" in m["content"][-1]) for m in body["messages"]] == [
        True,
        True,
        True,
        False,
        False,
    ]


def test_identical_requests_send_identical_bytes(fake: FakeProvider) -> None:
    request = ask("same question", cache_ttl="5m")

    chat(fake, request, request)

    first, second = fake.requests
    assert first.raw == second.raw


def test_second_request_sharing_the_prefix_reads_the_cache(fake: FakeProvider) -> None:
    big = SystemBlock("Directory tree:\n" + "src/module.py\n" * 400, cache_breakpoint=True)
    first_request = ask("first", system=(big,))
    second_request = ask("second, a longer question", system=(big,))

    first, second = chat(fake, first_request, second_request)

    assert first.usage.cache_read_tokens == 0
    assert first.usage.cache_write_tokens > 1000
    assert second.usage.cache_read_tokens == first.usage.cache_write_tokens
    assert second.usage.cache_write_tokens == 0
    assert second.usage.input_tokens > second.usage.cache_read_tokens
    assert fake.cache_stats().cached_tokens == second.usage.cache_read_tokens


def test_empty_text_blocks_are_left_out(fake: FakeProvider) -> None:
    request = ask("q", messages=(Message("user", (TextBlock(""), TextBlock("real question"))),))

    chat(fake, request)

    assert fake.requests[0].body["messages"][0]["content"] == [
        {"type": "text", "text": "real question"}
    ]


def test_truncated_answer_stops_with_max_tokens(fake: FakeProvider) -> None:
    fake.script(Text("cut off mid", truncated=True))

    [response] = chat(fake, ask("q"))

    assert response.stop_reason == "max_tokens"
    assert response.raw_stop_reason == "max_tokens"


def test_large_max_tokens_is_sent_without_streaming(fake: FakeProvider) -> None:
    # The SDK refuses non-streaming calls above ~21k max_tokens unless a timeout is explicit.
    [response] = chat(fake, ask("q", max_tokens=64_000))

    assert response.text
    assert fake.requests[0].body["max_tokens"] == 64_000


def test_subscription_token_goes_out_as_bearer_with_extra_headers(fake: FakeProvider) -> None:
    async def run() -> None:
        provider = AnthropicProvider(
            f"{fake.anthropic_base_url}/v1",
            None,
            auth_token="oauth-token",
            default_headers={"anthropic-beta": "oauth-2025-04-20"},
        )
        try:
            await provider.chat(ask("q"))
        finally:
            await provider.aclose()

    asyncio.run(run())

    headers = fake.requests[0].headers
    assert headers["authorization"] == "Bearer oauth-token"
    assert headers["anthropic-beta"] == "oauth-2025-04-20"
    assert fake.requests[0].path == "/v1/messages"


def test_one_provider_serves_two_event_loops_in_turn(fake: FakeProvider) -> None:
    provider = AnthropicProvider(fake.anthropic_base_url, "test-key")

    async def once() -> str:
        try:
            return (await provider.chat(ask("q"))).text
        finally:
            await provider.aclose()

    assert asyncio.run(once()) == asyncio.run(once())
    assert len(fake.requests) == 2
    assert provider.name == "anthropic"
    assert provider.endpoint == fake.anthropic_base_url
