"""Provider auto-detection from keys, tokens, endpoints and a Claude subscription credential."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from live_memory.config import NO_PROVIDER_PROBLEM, CloudPlatform, Settings, load_settings
from live_memory.errors import ConfigError


def detect(tmp_path: Path, **env: str) -> Settings:
    base = {"LIVE_MEMORY_DATA_DIR": str(tmp_path / "data")}
    return load_settings({**base, **env}, home=tmp_path / "home")


def write_credentials(home: Path, document: object) -> Path:
    path = home / ".claude" / ".credentials.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


SUBSCRIPTION = {"claudeAiOauth": {"accessToken": "sk-ant-oat01-token", "refreshToken": "r"}}


def test_anthropic_api_key_picks_anthropic_with_its_default_model(tmp_path: Path) -> None:
    settings = detect(tmp_path, ANTHROPIC_API_KEY="sk-ant-api03-key")
    assert settings.provider == "anthropic"
    assert settings.api_key == "sk-ant-api03-key"
    assert settings.api_key_source == "ANTHROPIC_API_KEY"
    assert settings.model == "claude-haiku-4-5"
    assert settings.effective_summary_model == "claude-haiku-4-5"
    assert settings.subscription is False
    assert settings.provider_problem is None


def test_anthropic_auth_token_picks_anthropic_as_bearer(tmp_path: Path) -> None:
    settings = detect(tmp_path, ANTHROPIC_AUTH_TOKEN="gateway-token")
    assert settings.provider == "anthropic"
    assert settings.api_key == "gateway-token"
    assert settings.api_key_source == "ANTHROPIC_AUTH_TOKEN"


def test_live_memory_key_with_anthropic_prefix_picks_anthropic(tmp_path: Path) -> None:
    settings = detect(
        tmp_path, LIVE_MEMORY_API_KEY="sk-ant-api03-x", ANTHROPIC_BASE_URL="https://proxy.example"
    )
    assert settings.provider == "anthropic"
    assert settings.api_key == "sk-ant-api03-x"
    assert settings.api_key_source == "LIVE_MEMORY_API_KEY"
    assert settings.base_url == "https://proxy.example"


def test_subscription_credential_in_home_picks_anthropic_without_key(tmp_path: Path) -> None:
    path = write_credentials(tmp_path / "home", SUBSCRIPTION)
    settings = detect(tmp_path)
    assert settings.provider == "anthropic"
    assert settings.subscription is True
    assert settings.api_key is None
    assert settings.credentials_file == path
    assert settings.model == "claude-haiku-4-5"


def test_subscription_credential_is_ignored_when_use_subscription_is_off(tmp_path: Path) -> None:
    write_credentials(tmp_path / "home", SUBSCRIPTION)
    settings = detect(tmp_path, LIVE_MEMORY_USE_SUBSCRIPTION="false")
    assert settings.provider is None
    assert settings.provider_problem == NO_PROVIDER_PROBLEM


@pytest.mark.parametrize(
    "document", [{}, {"claudeAiOauth": {}}, {"claudeAiOauth": {"accessToken": ""}}, ["x"]]
)
def test_credential_file_without_access_token_does_not_count(
    tmp_path: Path, document: object
) -> None:
    write_credentials(tmp_path / "home", document)
    assert detect(tmp_path).provider is None


def test_unreadable_credential_file_does_not_count(tmp_path: Path) -> None:
    path = tmp_path / "home" / ".claude" / ".credentials.json"
    path.parent.mkdir(parents=True)
    path.write_text("{broken", encoding="utf-8")
    assert detect(tmp_path).provider is None


def test_claude_config_dir_is_searched_for_the_credential(tmp_path: Path) -> None:
    path = write_credentials(tmp_path / "elsewhere", SUBSCRIPTION)
    settings = detect(tmp_path, CLAUDE_CONFIG_DIR=str(tmp_path / "elsewhere" / ".claude"))
    assert settings.subscription is True
    assert settings.credentials_file == path


def test_explicit_anthropic_without_key_uses_the_subscription(tmp_path: Path) -> None:
    write_credentials(tmp_path / "home", SUBSCRIPTION)
    settings = detect(tmp_path, LIVE_MEMORY_PROVIDER="anthropic")
    assert (settings.provider, settings.subscription) == ("anthropic", True)


def test_openai_key_picks_openai_with_its_default_model(tmp_path: Path) -> None:
    settings = detect(tmp_path, OPENAI_API_KEY="sk-proj-abc")
    assert settings.provider == "openai"
    assert settings.api_key == "sk-proj-abc"
    assert settings.model == "gpt-5-mini"
    assert settings.base_url is None


def test_openai_key_outranks_a_subscription_credential(tmp_path: Path) -> None:
    write_credentials(tmp_path / "home", SUBSCRIPTION)
    settings = detect(tmp_path, OPENAI_API_KEY="sk-proj-abc")
    assert (settings.provider, settings.subscription) == ("openai", False)


def test_base_url_alone_picks_openai_compatible_endpoint(tmp_path: Path) -> None:
    settings = detect(tmp_path, LIVE_MEMORY_BASE_URL="http://localhost:11434/v1")
    assert settings.provider == "openai"
    assert settings.base_url == "http://localhost:11434/v1"
    assert settings.api_key is None
    from_openai_env = detect(tmp_path, OPENAI_BASE_URL="https://api.deepseek.com")
    assert from_openai_env.provider == "openai"
    assert from_openai_env.base_url == "https://api.deepseek.com"


def test_live_memory_values_outrank_the_providers_own_variables(tmp_path: Path) -> None:
    settings = detect(
        tmp_path,
        LIVE_MEMORY_API_KEY="lm-key",
        OPENAI_API_KEY="openai-key",
        LIVE_MEMORY_BASE_URL="https://gateway.example/v1",
        OPENAI_BASE_URL="https://api.openai.com/v1",
        LIVE_MEMORY_MODEL="deepseek-chat",
        LIVE_MEMORY_SUMMARY_MODEL="deepseek-lite",
    )
    assert settings.provider == "openai"
    assert (settings.api_key, settings.api_key_source) == ("lm-key", "LIVE_MEMORY_API_KEY")
    assert settings.base_url == "https://gateway.example/v1"
    assert (settings.model, settings.effective_summary_model) == ("deepseek-chat", "deepseek-lite")


def test_explicit_provider_wins_over_detection(tmp_path: Path) -> None:
    settings = detect(tmp_path, LIVE_MEMORY_PROVIDER="openai", ANTHROPIC_API_KEY="sk-ant-x")
    assert settings.provider == "openai"
    assert settings.api_key is None


def test_nothing_configured_gives_no_provider_and_says_what_to_set(tmp_path: Path) -> None:
    settings = detect(tmp_path)
    assert settings.provider is None
    assert settings.model == ""
    assert settings.provider_problem == (
        "No model provider configured: set ANTHROPIC_API_KEY (or LIVE_MEMORY_PROVIDER=anthropic "
        "with LIVE_MEMORY_API_KEY), or OPENAI_API_KEY / LIVE_MEMORY_BASE_URL for an "
        "OpenAI-compatible endpoint."
    )


def test_malformed_provider_base_url_is_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="ANTHROPIC_BASE_URL must be an http"):
        detect(tmp_path, ANTHROPIC_API_KEY="sk-ant-x", ANTHROPIC_BASE_URL="proxy:8080")


def test_provider_can_come_from_config_json(tmp_path: Path) -> None:
    config = tmp_path / "data" / "config.json"
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps({"provider": "openai", "api_key": "cfg-key"}), encoding="utf-8")
    settings = detect(tmp_path)
    assert (settings.provider, settings.api_key) == ("openai", "cfg-key")


def test_claude_code_bedrock_flag_picks_anthropic_on_bedrock_in_its_region(tmp_path: Path) -> None:
    settings = detect(
        tmp_path,
        CLAUDE_CODE_USE_BEDROCK="1",
        AWS_REGION="eu-central-1",
        AWS_PROFILE="work",
        ANTHROPIC_API_KEY="sk-ant-api03-key",  # Claude Code ignores it on Bedrock, as do we
    )
    assert settings.provider == "anthropic"
    assert settings.cloud == CloudPlatform("bedrock", "eu-central-1", aws_profile="work")
    assert settings.base_url == "https://bedrock-runtime.eu-central-1.amazonaws.com"
    assert settings.model == "global.anthropic.claude-haiku-4-5-20251001-v1:0"
    assert settings.api_key is None


def test_claude_code_vertex_flag_uses_its_region_project_and_haiku_model(tmp_path: Path) -> None:
    settings = detect(
        tmp_path,
        CLAUDE_CODE_USE_VERTEX="true",
        CLOUD_ML_REGION="us-east5",
        ANTHROPIC_VERTEX_PROJECT_ID="proj",
        ANTHROPIC_DEFAULT_HAIKU_MODEL="claude-haiku-4-5@20251001",
    )
    assert settings.cloud == CloudPlatform("vertex", "us-east5", project_id="proj")
    assert settings.base_url == "https://us-east5-aiplatform.googleapis.com/v1"
    assert settings.model == "claude-haiku-4-5@20251001"


@pytest.mark.parametrize(
    ("env", "missing"),
    [
        ({"CLAUDE_CODE_USE_BEDROCK": "1"}, "AWS_REGION"),
        (
            {"CLAUDE_CODE_USE_VERTEX": "1", "CLOUD_ML_REGION": "global"},
            "ANTHROPIC_VERTEX_PROJECT_ID",
        ),
    ],
)
def test_a_cloud_platform_without_its_region_or_project_is_a_problem_naming_it(
    tmp_path: Path, env: dict[str, str], missing: str
) -> None:
    settings = detect(tmp_path, **env)
    assert settings.provider is None
    assert settings.provider_problem is not None and missing in settings.provider_problem


def test_live_memory_own_key_or_base_url_outranks_the_claude_code_platform(tmp_path: Path) -> None:
    keyed = detect(
        tmp_path,
        CLAUDE_CODE_USE_BEDROCK="1",
        AWS_REGION="us-east-1",
        LIVE_MEMORY_API_KEY="sk-ant-api03-key",
    )
    local = detect(
        tmp_path,
        CLAUDE_CODE_USE_BEDROCK="1",
        AWS_REGION="us-east-1",
        LIVE_MEMORY_BASE_URL="http://127.0.0.1:8080/v1",
    )
    assert (keyed.provider, keyed.cloud) == ("anthropic", None)
    assert (local.provider, local.cloud) == ("openai", None)
