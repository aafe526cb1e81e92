from __future__ import annotations

import asyncio
import json

import pytest

from live_memory.providers import (
    ChatRequest,
    ChatResponse,
    Message,
    OpenAIProvider,
    SystemBlock,
    TextBlock,
    ToolResultBlock,
    ToolSpec,
)
from tests.support.fakes import FakeProvider, Text, ToolUse

READ = ToolSpec(
    "Read",
    "Read a file",
    {"type": "object", "properties": {"file_path": {"type": "string"}}, "required": ["file_path"]},
)
MODEL = "qwen3-coder"


def ask(question: str, **kwargs: object) -> ChatRequest:
    fields: dict[str, object] = {
        "model": MODEL,
        "system": (SystemBlock("You answer questions.", True), SystemBlock("Tree: src/")),
        "messages": (Message("user", (TextBlock(question),)),),
        "tools": (READ,),
        "max_tokens": 256,
    }
    fields.update(kwargs)
    return ChatRequest(**fields)  # type: ignore[arg-type]


def chat(
    base_url: str, *requests: ChatRequest, api_key: str | None = "test-key", **options: object
) -> list[ChatResponse]:
    async def run() -> list[ChatResponse]:
        provider = OpenAIProvider(base_url, api_key, **options)  # type: ignore[arg-type]
        try:
            return [await provider.chat(r) for r in requests]
        finally:
            await provider.aclose()

    return asyncio.run(run())


def test_text_answer_and_request_shape(fake: FakeProvider) -> None:
    fake.script(Text("It is in src/app.py."))

    [response] = chat(fake.openai_base_url, ask("Where?"))

    assert response.text == "It is in src/app.py."
    assert response.stop_reason == "end_turn"
    [recorded] = fake.requests
    assert recorded.path == "/v1/chat/completions"
    assert recorded.headers["authorization"] == "Bearer test-key"
    body = recorded.body
    assert body["messages"] == [
        {"role": "system", "content": "You answer questions.\n\nTree: src/"},
        {"role": "user", "content": "Where?"},
    ]
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "Read",
                "description": "Read a file",
                "parameters": dict(READ.input_schema),
            },
        }
    ]
    assert body["max_tokens"] == 256
    assert "max_completion_tokens" not in body
    assert "prompt_cache_key" not in body


def test_token_limit_field_can_be_max_completion_tokens(fake: FakeProvider) -> None:
    chat(fake.openai_base_url, ask("q"), token_limit_field="max_completion_tokens")

    body = fake.requests[0].body
    assert body["max_completion_tokens"] == 256
    assert "max_tokens" not in body


def test_base_url_without_a_path_gets_v1(fake: FakeProvider) -> None:
    [response] = chat(fake.url, ask("q"))

    assert response.text
    assert fake.requests[0].path == "/v1/chat/completions"


def test_tool_calls_round_trip_with_empty_content_and_tool_messages(fake: FakeProvider) -> None:
    fake.script(ToolUse("Read", {"file_path": "a.py"}), Text("a.py defines main()."))
    first_request = ask("What is in a.py?")
    [first] = chat(fake.openai_base_url, first_request)
    [call] = first.tool_calls
    assert first.stop_reason == "tool_use"
    assert (call.name, call.arguments) == ("Read", {"file_path": "a.py"})

    follow_up = ask(
        "unused",
        messages=(
            *first_request.messages,
            Message("assistant", first.blocks),
            Message(
                "user",
                (ToolResultBlock(call.id, "boom", is_error=True), TextBlock("Be brief.")),
            ),
        ),
    )
    [second] = chat(fake.openai_base_url, follow_up)  # the fake refuses null content

    assert second.text == "a.py defines main()."
    sent = fake.requests[1].body["messages"]
    assert sent[2] == {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": "Read", "arguments": '{"file_path":"a.py"}'},
            }
        ],
    }
    assert sent[3] == {"role": "tool", "tool_call_id": call.id, "content": "ERROR: boom"}
    assert sent[4] == {"role": "user", "content": "Be brief."}


def test_cache_key_is_sent_and_cached_tokens_are_reported(fake: FakeProvider) -> None:
    tree = SystemBlock("Tree:\n" + "src/pkg/module.py\n" * 300)
    first, second = chat(
        fake.openai_base_url,
        ask("first", system=(tree,), cache_key="ws-1234"),
        ask("second", system=(tree,), cache_key="ws-1234"),
    )

    assert [r.body["prompt_cache_key"] for r in fake.requests] == ["ws-1234", "ws-1234"]
    assert first.usage.cache_read_tokens == 0
    assert second.usage.cache_read_tokens > 0
    assert second.usage.cache_read_tokens % 128 == 0
    assert second.usage.input_tokens > second.usage.cache_read_tokens


def test_identical_requests_send_identical_bytes(fake: FakeProvider) -> None:
    request = ask("same", cache_key="ws")

    chat(fake.openai_base_url, request, request)

    first, second = fake.requests
    assert first.raw == second.raw


def test_deepseek_cache_hit_fields_become_cache_reads() -> None:
    tree = SystemBlock("Tree:\n" + "src/pkg/module.py\n" * 100)
    with FakeProvider(deepseek_usage=True) as deepseek:
        first, second = chat(
            deepseek.openai_base_url,
            ask("first", system=(tree,), model="deepseek-chat"),
            ask("second", system=(tree,), model="deepseek-chat"),
        )
        usage_sent = deepseek.requests[1].body

    assert "prompt_cache_key" not in usage_sent
    assert first.usage.cache_read_tokens == 0
    assert second.usage.cache_read_tokens > 0
    assert second.usage.cache_read_tokens % 64 == 0
    assert second.usage.input_tokens > second.usage.cache_read_tokens


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "Read", "arguments": {"file_path": "a.py"}}',
        '```json\n{"name": "Read", "arguments": {"file_path": "a.py"}}\n```',
        '<tool_call>\n{"name": "Read", "arguments": {"file_path": "a.py"}}\n</tool_call>',
        json.dumps({"name": "Read", "arguments": json.dumps({"file_path": "a.py"})}),
    ],
    ids=["bare", "fenced", "tagged", "double-encoded"],
)
def test_local_model_tool_call_written_as_text_becomes_a_tool_call(
    fake: FakeProvider, text: str
) -> None:
    fake.script(Text(text))

    [response] = chat(fake.openai_base_url, ask("q"), api_key=None)

    assert response.stop_reason == "tool_use"
    assert response.text == ""
    [call] = response.tool_calls
    assert (call.name, call.arguments) == ("Read", {"file_path": "a.py"})
    assert fake.requests[0].headers["authorization"].startswith("Bearer ")


def test_json_naming_a_tool_not_offered_stays_text(fake: FakeProvider) -> None:
    text = '{"name": "Bash", "arguments": {"command": "ls"}}'
    fake.script(Text(text))

    [response] = chat(fake.openai_base_url, ask("q"))

    assert response.text == text
    assert response.tool_calls == ()
    assert response.stop_reason == "end_turn"


def test_truncated_answer_stops_with_max_tokens(fake: FakeProvider) -> None:
    fake.script(Text("cut", truncated=True))

    [response] = chat(fake.openai_base_url, ask("q"))

    assert response.stop_reason == "max_tokens"
    assert response.raw_stop_reason == "length"
