"""Endpoint kinds from base URLs, and what each one's prompt cache accepts."""

from __future__ import annotations

import asyncio

import pytest

from live_memory.providers import (
    ChatRequest,
    Message,
    OpenAIProvider,
    TextBlock,
    endpoint_kind,
    prompt_cache_retention_for,
    supports_1h_cache_ttl,
)
from live_memory.providers.endpoint import (
    EndpointKind,
    sends_key_as_bearer,
    unsupported_endpoint_problem,
)
from live_memory.providers.openai_adapter import build_chat_params
from tests.support.fakes import FakeProvider


@pytest.mark.parametrize(
    ("provider", "base_url", "model", "kind"),
    [
        ("anthropic", None, "claude-haiku-4-5", "anthropic"),
        ("anthropic", "https://api.anthropic.com/v1", "claude-haiku-4-5", "anthropic"),
        ("anthropic", "https://bedrock-mantle.eu-west-1.api.aws/anthropic", "x", "bedrock_mantle"),
        ("anthropic", "https://bedrock-runtime.us-west-2.amazonaws.com", "x", "bedrock_runtime"),
        ("anthropic", "https://europe-west1-aiplatform.googleapis.com/v1", "x", "vertex"),
        ("anthropic", "https://litellm.internal:4000", "claude-haiku-4-5", "anthropic_gateway"),
        ("anthropic", "http://127.0.0.1:8080", "claude-haiku-4-5", "anthropic_gateway"),
        ("openai", None, "gpt-5-mini", "openai"),
        ("openai", "https://api.openai.com/v1", "gpt-5.1", "openai"),
        ("openai", "https://api.deepseek.com", "deepseek-chat", "deepseek"),
        ("openai", "https://openrouter.ai/api/v1", "deepseek/deepseek-chat", "deepseek"),
        ("openai", "https://acme.openai.azure.com/openai/v1", "gpt-5", "azure_openai"),
        ("openai", "http://localhost:11434/v1", "qwen3-coder", "openai_compatible"),
    ],
)
def test_endpoint_kind_comes_from_the_base_url_and_model(
    provider: str, base_url: str | None, model: str, kind: str
) -> None:
    assert endpoint_kind(provider, base_url, model) == kind


def test_only_anthropics_own_api_gets_the_1_hour_ttl() -> None:
    assert supports_1h_cache_ttl("anthropic")
    others: tuple[EndpointKind, ...] = (
        "anthropic_gateway",
        "bedrock_mantle",
        "vertex",
        "openai",
        "deepseek",
    )
    for kind in others:
        assert not supports_1h_cache_ttl(kind)


def test_bedrock_mantle_takes_its_key_as_a_bearer_token_and_others_need_no_problem() -> None:
    assert sends_key_as_bearer("bedrock_mantle")
    assert not sends_key_as_bearer("anthropic")
    assert unsupported_endpoint_problem("bedrock_mantle", "https://x") is None
    assert unsupported_endpoint_problem("anthropic_gateway", "https://x") is None


@pytest.mark.parametrize(
    ("base_url", "model", "retention"),
    [
        ("https://api.openai.com/v1", "gpt-5.1", "24h"),
        ("https://api.openai.com/v1", "gpt-5.1-codex-mini", "24h"),
        ("https://api.openai.com/v1", "gpt-5", "24h"),
        ("https://api.openai.com/v1", "gpt-4.1-2025-04-14", "24h"),
        ("https://api.openai.com/v1", "gpt-5.5", "24h"),
        (None, "gpt-5.6-sol", "24h"),
        ("https://api.openai.com/v1", "gpt-5-mini", None),
        ("https://api.openai.com/v1", "gpt-4.1-nano", None),
        ("https://api.openai.com/v1", "gpt-4o", None),
        ("https://openrouter.ai/api/v1", "gpt-5.1", None),
        ("https://api.deepseek.com", "deepseek-chat", None),
    ],
)
def test_24h_prompt_cache_retention_only_for_openai_models_known_to_accept_it(
    base_url: str | None, model: str, retention: str | None
) -> None:
    assert prompt_cache_retention_for(base_url, model) == retention


def ask(model: str) -> ChatRequest:
    return ChatRequest(
        model=model,
        system=(),
        messages=(Message("user", (TextBlock("q"),)),),
        tools=(),
        max_tokens=16,
        cache_key="ws-1",
    )


def test_retention_is_sent_when_asked_for_and_not_to_other_servers(fake: FakeProvider) -> None:
    params = build_chat_params(ask("gpt-5.1"), cache_retention="24h")
    assert params["prompt_cache_retention"] == "24h"
    assert "prompt_cache_retention" not in build_chat_params(ask("gpt-5.1"))

    provider = OpenAIProvider(fake.openai_base_url, "k")

    async def run() -> None:
        try:
            await provider.chat(ask("gpt-5.1"))
        finally:
            await provider.aclose()

    asyncio.run(run())
    assert "prompt_cache_retention" not in fake.requests[0].body
    assert fake.requests[0].body["prompt_cache_key"] == "ws-1"
