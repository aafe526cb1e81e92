"""Zero-config Claude subscription, end to end: environment → settings → provider → fake API."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from live_memory.agent.provider_factory import make_provider
from live_memory.config import Settings, load_settings
from live_memory.errors import NoProviderConfigured, ProviderAuthError
from live_memory.providers import ChatRequest, Message, Provider, TextBlock
from tests.support.fakes import Error, FakeProvider, FakeTokenEndpoint

REQUEST = ChatRequest(
    model="claude-haiku-4-5",
    system=(),
    messages=(Message("user", (TextBlock("q"),)),),
    tools=(),
    max_tokens=16,
)


def ask(provider: Provider, times: int = 1) -> None:
    async def run() -> None:
        try:
            for _ in range(times):
                await provider.chat(REQUEST)
        finally:
            await provider.aclose()

    asyncio.run(run())


def write_claude(home: Path, access: str, expires_in_s: float) -> Path:
    path = home / ".claude" / ".credentials.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    section = {
        "accessToken": access,
        "refreshToken": "cc-refresh",
        "expiresAt": int((time.time() + expires_in_s) * 1000),
    }
    path.write_text(json.dumps({"claudeAiOauth": section}), encoding="utf-8")
    return path


def environ(tmp_path: Path, fake: FakeProvider, endpoint: FakeTokenEndpoint) -> dict[str, str]:
    return {
        "HOME": str(tmp_path / "home"),
        "LIVE_MEMORY_DATA_DIR": str(tmp_path / "data"),
        "ANTHROPIC_BASE_URL": fake.url,
        "LIVE_MEMORY_OAUTH_TOKEN_URL": endpoint.url,
    }


def test_subscription_is_detected_refreshed_and_used_without_any_key(
    tmp_path: Path, fake: FakeProvider, endpoint: FakeTokenEndpoint
) -> None:
    claude = write_claude(tmp_path / "home", "cc-access", expires_in_s=60)
    before = claude.read_bytes()

    settings = load_settings(environ(tmp_path, fake, endpoint), home=tmp_path / "home")
    ask(make_provider(settings), times=2)

    assert (settings.provider, settings.subscription) == ("anthropic", True)
    assert settings.model == "claude-haiku-4-5"
    assert len(endpoint.requests) == 1  # refreshed once, before expiry
    for request in fake.requests:
        assert request.headers["authorization"] == "Bearer fake-access-1"
        assert "oauth" in request.headers["anthropic-beta"]
    stored = json.loads((tmp_path / "data" / "oauth.json").read_text(encoding="utf-8"))
    assert stored["claudeAiOauth"]["accessToken"] == "fake-access-1"
    assert claude.read_bytes() == before


def test_claude_config_dir_credential_is_found(
    tmp_path: Path, fake: FakeProvider, endpoint: FakeTokenEndpoint
) -> None:
    write_claude(tmp_path / "elsewhere", "cc-access", expires_in_s=3600)
    env = environ(tmp_path, fake, endpoint)
    env["CLAUDE_CONFIG_DIR"] = str(tmp_path / "elsewhere" / ".claude")

    ask(make_provider(load_settings(env, home=tmp_path / "home")))

    assert fake.requests[0].headers["authorization"] == "Bearer cc-access"
    assert endpoint.requests == []


def test_opting_out_ignores_the_subscription(
    tmp_path: Path, fake: FakeProvider, endpoint: FakeTokenEndpoint
) -> None:
    write_claude(tmp_path / "home", "cc-access", expires_in_s=60)
    env = {**environ(tmp_path, fake, endpoint), "LIVE_MEMORY_USE_SUBSCRIPTION": "false"}

    settings = load_settings(env, home=tmp_path / "home")

    assert settings.subscription is False
    assert settings.provider is None
    with pytest.raises(NoProviderConfigured, match="ANTHROPIC_API_KEY"):
        make_provider(settings)
    assert fake.requests == []
    assert endpoint.requests == []


def test_an_api_key_outranks_the_subscription(
    tmp_path: Path, fake: FakeProvider, endpoint: FakeTokenEndpoint
) -> None:
    write_claude(tmp_path / "home", "cc-access", expires_in_s=60)
    env = {**environ(tmp_path, fake, endpoint), "ANTHROPIC_API_KEY": "sk-ant-api03-key"}

    ask(make_provider(load_settings(env, home=tmp_path / "home")))

    assert fake.requests[0].headers["authorization"] == "Bearer sk-ant-api03-key"
    assert "anthropic-beta" not in fake.requests[0].headers
    assert endpoint.requests == []


def test_a_refused_subscription_token_is_refreshed_and_the_call_retried_once(
    tmp_path: Path, endpoint: FakeTokenEndpoint
) -> None:
    claude = write_claude(tmp_path / "home", "cc-revoked", expires_in_s=3600)
    with FakeProvider(require_key="fake-access-1") as strict:
        settings = Settings(
            provider="anthropic",
            base_url=strict.url,
            subscription=True,
            credentials_file=claude,
            data_dir=tmp_path / "data",
            oauth_token_url=endpoint.url,
        )
        ask(make_provider(settings))
        sent = [r.headers["authorization"] for r in strict.requests]

    assert sent == ["Bearer cc-revoked", "Bearer fake-access-1"]
    assert len(endpoint.requests) == 1


def test_a_forbidden_model_is_not_mistaken_for_a_stale_token(
    tmp_path: Path, fake: FakeProvider, endpoint: FakeTokenEndpoint
) -> None:
    claude = write_claude(tmp_path / "home", "cc-access", expires_in_s=3600)
    fake.script(Error(403, "permission_error", "this model is not on your plan"))
    settings = Settings(
        provider="anthropic",
        base_url=fake.url,
        subscription=True,
        credentials_file=claude,
        data_dir=tmp_path / "data",
        oauth_token_url=endpoint.url,
    )

    with pytest.raises(ProviderAuthError, match="403"):
        ask(make_provider(settings))

    assert len(fake.requests) == 1
    assert endpoint.requests == []
