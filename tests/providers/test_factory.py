from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from live_memory.agent.provider_factory import make_provider
from live_memory.config.settings import Settings
from live_memory.errors import ConfigError, NoProviderConfigured, ProviderAuthError
from live_memory.providers import (
    AnthropicProvider,
    ChatRequest,
    LazyProvider,
    Message,
    Provider,
    TextBlock,
)
from tests.support.fakes import FakeProvider

REQUEST = ChatRequest(
    model="claude-haiku-4-5",
    system=(),
    messages=(Message("user", (TextBlock("q"),)),),
    tools=(),
    max_tokens=16,
)


def ask_once(provider: Provider) -> str:
    async def run() -> str:
        try:
            return (await provider.chat(REQUEST)).text
        finally:
            await provider.aclose()

    return asyncio.run(run())


def test_no_provider_raises_with_what_to_set() -> None:
    settings = Settings(provider=None, provider_problem="set LIVE_MEMORY_API_KEY or ...")

    with pytest.raises(NoProviderConfigured, match="set LIVE_MEMORY_API_KEY"):
        make_provider(settings)


def test_unknown_provider_is_a_config_error_naming_the_variable() -> None:
    with pytest.raises(ConfigError, match="LIVE_MEMORY_PROVIDER"):
        make_provider(Settings(provider="gemini"))


def test_default_base_urls() -> None:
    anthropic = make_provider(Settings(provider="anthropic", api_key="k"))
    openai = make_provider(Settings(provider="openai", api_key="k"))

    assert anthropic.name == "anthropic"
    assert anthropic.endpoint == "https://api.anthropic.com"
    assert openai.name == "openai"
    assert openai.endpoint == "https://api.openai.com/v1"


def test_configured_providers_reach_their_base_url(fake: FakeProvider) -> None:
    anthropic = make_provider(Settings(provider="anthropic", base_url=fake.url, api_key="k1"))
    openai = make_provider(Settings(provider="openai", base_url=fake.openai_base_url, api_key="k2"))

    assert ask_once(anthropic) and ask_once(openai)

    first, second = fake.requests
    assert (first.wire, first.headers["authorization"]) == ("anthropic", "Bearer k1")
    assert (second.wire, second.headers["authorization"]) == ("openai", "Bearer k2")


def test_subscription_credential_is_sent_as_oauth_bearer(fake: FakeProvider) -> None:
    settings = Settings(
        provider="anthropic", base_url=fake.url, api_key="oauth-access-token", subscription=True
    )

    ask_once(make_provider(settings))

    headers = fake.requests[0].headers
    assert headers["authorization"] == "Bearer oauth-access-token"
    assert "oauth" in headers["anthropic-beta"]


def test_subscription_token_is_read_from_the_credential_file_and_reread_when_it_changes(
    fake: FakeProvider, tmp_path: Path
) -> None:
    credentials = tmp_path / ".credentials.json"
    credentials.write_text(json.dumps({"claudeAiOauth": {"accessToken": "first-token"}}))
    settings = Settings(
        provider="anthropic",
        base_url=fake.url,
        subscription=True,
        credentials_file=credentials,
        data_dir=tmp_path / "data",
    )
    provider = make_provider(settings)

    async def twice() -> None:
        try:
            await provider.chat(REQUEST)
            credentials.write_text(
                json.dumps({"claudeAiOauth": {"accessToken": "refreshed-token"}})
            )
            await provider.chat(REQUEST)
        finally:
            await provider.aclose()

    asyncio.run(twice())

    assert [r.headers["authorization"] for r in fake.requests] == [
        "Bearer first-token",
        "Bearer refreshed-token",
    ]


def test_missing_credential_file_is_an_auth_error_before_any_request(
    fake: FakeProvider, tmp_path: Path
) -> None:
    settings = Settings(
        provider="anthropic",
        base_url=fake.url,
        subscription=True,
        credentials_file=tmp_path / "gone.json",
        data_dir=tmp_path / "data",
    )

    with pytest.raises(ProviderAuthError, match=r"gone\.json"):
        ask_once(make_provider(settings))

    assert fake.requests == []


def test_auth_token_variable_is_sent_as_a_bearer_token(fake: FakeProvider) -> None:
    settings = Settings(
        provider="anthropic",
        base_url=fake.url,
        api_key="token-from-env",
        api_key_source="ANTHROPIC_AUTH_TOKEN",
    )

    ask_once(make_provider(settings))

    assert fake.requests[0].headers["authorization"] == "Bearer token-from-env"
    assert "anthropic-beta" not in fake.requests[0].headers


@pytest.mark.parametrize(
    ("base_url", "advice"),
    [
        ("https://bedrock-runtime.us-east-1.amazonaws.com", "bedrock-mantle"),
        ("https://us-east5-aiplatform.googleapis.com/v1", "gateway"),
    ],
    ids=["bedrock-runtime", "vertex"],
)
def test_cloud_endpoints_needing_request_signing_are_refused_with_what_to_use(
    base_url: str, advice: str
) -> None:
    with pytest.raises(ConfigError, match=f"LIVE_MEMORY_BASE_URL.*{advice}"):
        make_provider(Settings(provider="anthropic", base_url=base_url, api_key="k"))


def test_bedrock_mantle_speaks_anthropic_messages_with_the_key_as_bearer() -> None:
    url = "https://bedrock-mantle.us-east-1.api.aws/anthropic"

    provider = make_provider(Settings(provider="anthropic", base_url=url, api_key="bedrock-key"))

    assert provider.name == "anthropic"
    assert provider.endpoint == url


def test_the_sdk_adapter_is_built_once_on_first_use(fake: FakeProvider) -> None:
    provider = make_provider(Settings(provider="anthropic", base_url=fake.url, api_key="k1"))
    assert isinstance(provider, LazyProvider)
    assert provider._real is None  # nothing built (and no SDK needed) before the first call
    assert ask_once(provider)
    built = provider._real
    assert isinstance(built, AnthropicProvider)
    assert ask_once(provider) and provider._real is built
