"""Every LIVE_MEMORY_* variable is parsed, and every invalid value is refused by name."""

from __future__ import annotations

from pathlib import Path

import pytest

from live_memory.config import Settings, load_settings
from live_memory.errors import ConfigError


def load(tmp_path: Path, **env: str) -> Settings:
    return load_settings({"HOME": str(tmp_path / "home"), **env}, home=tmp_path / "home")


VALID: list[tuple[str, str, str, object]] = [
    ("HOST", "0.0.0.0", "host", "0.0.0.0"),
    ("PORT", "8080", "port", 8080),
    ("PORT", " 65535 ", "port", 65535),
    ("TOKEN", "s3cret-token", "token", "s3cret-token"),
    ("PROVIDER", "OpenAI", "provider", "openai"),
    ("BASE_URL", "http://localhost:11434/v1", "base_url", "http://localhost:11434/v1"),
    ("MODEL", "deepseek-chat", "model", "deepseek-chat"),
    ("SUMMARY_MODEL", "tiny-model", "summary_model", "tiny-model"),
    ("MAX_CONTEXT_TOKENS", "200000", "max_context_tokens", 200_000),
    ("COMPACTION_THRESHOLD", "0.9", "compaction_threshold", 0.9),
    ("COMPACTION_THRESHOLD", "1", "compaction_threshold", 1.0),
    ("COMPACTION_FLOOR", "0.5", "compaction_floor", 0.5),
    ("DEFAULT_TIMEOUT_S", "30", "default_timeout_s", 30.0),
    ("MAX_ANSWER_TOKENS", "4096", "max_answer_tokens", 4096),
    ("CONCURRENCY", "serial", "concurrency", "serial"),
    ("MAX_PARALLEL_QUERIES", "8", "max_parallel_queries", 8),
    ("ASYNC_TOOLS", "yes", "async_tools", True),
    ("KEEP_WARM", "ON", "keep_warm", True),
    ("KEEP_WARM_INTERVAL_S", "120.5", "keep_warm_interval_s", 120.5),
    ("KEEP_WARM_MAX_IDLE_S", "600", "keep_warm_max_idle_s", 600.0),
    ("PRELOAD_GLOBS", "docs/*.md, README.md,,", "preload_globs", ("docs/*.md", "README.md")),
    ("FILE_GLOBS", "src/**/*.py", "file_globs", ("src/**/*.py",)),
    ("INCLUDE_VENDORED", "true", "include_vendored", True),
    (
        "OPENAI_EXTRA_BODY",
        '{"provider": {"order": ["a"]}}',
        "openai_extra_body",
        {"provider": {"order": ["a"]}},
    ),
    ("PASSIVE_INGESTION", "0", "passive_ingestion", False),
    ("FORCE_EXPLORE_WHEN_COLD", "false", "force_explore_when_cold", False),
    ("WATCHER", "os", "watcher", "os"),
    ("CANONICALIZE_WORKSPACE", "off", "canonicalize_workspace", False),
    ("REPO_ROOT_MODE", "outermost", "repo_root_mode", "outermost"),
    ("ALLOWED_ROOTS", "/, /opt/x/../y,", "allowed_roots", ("/", "/opt/y")),
    ("LOG_LEVEL", "DEBUG", "log_level", "debug"),
    ("PRICE_CACHE_READ_MULT", "0.2", "price_cache_read_mult", 0.2),
    ("PRICE_CACHE_WRITE_MULT", "2", "price_cache_write_mult", 2.0),
    ("DAILY_BUDGET_USD", "5", "daily_budget_usd", 5.0),
    ("WORKSPACE_DAILY_BUDGET_USD", "0.5", "workspace_daily_budget_usd", 0.5),
    ("USE_SUBSCRIPTION", "no", "use_subscription", False),
    (
        "OAUTH_TOKEN_URL",
        "https://auth.example/token",
        "oauth_token_url",
        "https://auth.example/token",
    ),
]


@pytest.mark.parametrize(("name", "raw", "field", "expected"), VALID)
def test_valid_variable_is_parsed_into_its_field(
    tmp_path: Path, name: str, raw: str, field: str, expected: object
) -> None:
    settings = load(tmp_path, **{f"LIVE_MEMORY_{name}": raw})
    assert getattr(settings, field) == expected


INVALID: list[tuple[str, str]] = [
    ("HOST", "two words"),
    ("PORT", "0"),
    ("PORT", "65536"),
    ("PORT", "http"),
    ("PORT", "80.5"),
    ("TOKEN", "has space"),
    ("PROVIDER", "gemini"),
    ("BASE_URL", "localhost:8080"),
    ("BASE_URL", "ftp://example.com"),
    ("BASE_URL", "http://host:99999"),
    ("API_KEY", "line\nbreak"),
    ("MODEL", "a model"),
    ("SUMMARY_MODEL", "x\ty"),
    ("MAX_CONTEXT_TOKENS", "10"),
    ("MAX_CONTEXT_TOKENS", "lots"),
    ("COMPACTION_THRESHOLD", "0"),
    ("COMPACTION_THRESHOLD", "1.5"),
    ("COMPACTION_THRESHOLD", "nan"),
    ("COMPACTION_FLOOR", "-0.1"),
    ("DEFAULT_TIMEOUT_S", "0"),
    ("DEFAULT_TIMEOUT_S", "inf"),
    ("MAX_ANSWER_TOKENS", "1"),
    ("MAX_ANSWER_TOKENS", "1000000"),
    ("CONCURRENCY", "both"),
    ("MAX_PARALLEL_QUERIES", "0"),
    ("MAX_PARALLEL_QUERIES", "1000"),
    ("ASYNC_TOOLS", "maybe"),
    ("KEEP_WARM", "2"),
    ("KEEP_WARM_INTERVAL_S", "-5"),
    ("KEEP_WARM_MAX_IDLE_S", "soon"),
    ("PRELOAD_GLOBS", "/etc/*"),
    ("FILE_GLOBS", "~/secrets/*"),
    ("INCLUDE_VENDORED", "maybe"),
    ("OPENAI_EXTRA_BODY", "provider=x"),
    ("OPENAI_EXTRA_BODY", "[1, 2]"),
    ("OPENAI_EXTRA_BODY", '{"model": "other"}'),
    ("PASSIVE_INGESTION", "sometimes"),
    ("FORCE_EXPLORE_WHEN_COLD", "maybe"),
    ("WATCHER", "inotify"),
    ("CANONICALIZE_WORKSPACE", "yesno"),
    ("REPO_ROOT_MODE", "innermost"),
    ("ALLOWED_ROOTS", "/srv, relative/dir"),
    ("LOG_LEVEL", "verbose"),
    ("LOG_FILE", "bad\x01name"),
    ("PRICE_CACHE_READ_MULT", "-1"),
    ("PRICE_CACHE_WRITE_MULT", "lots"),
    ("DAILY_BUDGET_USD", "0"),
    ("WORKSPACE_DAILY_BUDGET_USD", "-3"),
    ("USE_SUBSCRIPTION", "nah"),
    ("OAUTH_TOKEN_URL", "not a url"),
    ("INSIGHTS_ROOT", "relative/dir\x00"),
    ("DATA_DIR", "relative/dir"),
]


@pytest.mark.parametrize(("name", "raw"), INVALID)
def test_invalid_variable_is_refused_with_its_name(tmp_path: Path, name: str, raw: str) -> None:
    with pytest.raises(ConfigError, match=f"LIVE_MEMORY_{name}"):
        load(tmp_path, **{f"LIVE_MEMORY_{name}": raw})


def test_port_error_message_names_variable_range_and_value(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, LIVE_MEMORY_PORT="0")
    assert str(caught.value) == "LIVE_MEMORY_PORT must be 1-65535, got 0"


def test_secret_values_are_not_echoed_in_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, LIVE_MEMORY_API_KEY="sk-ant-top secret")
    assert "top secret" not in str(caught.value)
    assert "LIVE_MEMORY_API_KEY" in str(caught.value)


def test_price_overrides_are_accepted_together(tmp_path: Path) -> None:
    settings = load(tmp_path, LIVE_MEMORY_PRICE_INPUT="1", LIVE_MEMORY_PRICE_OUTPUT="5")
    assert (settings.price_input, settings.price_output) == (1.0, 5.0)


@pytest.mark.parametrize("name", ["PRICE_INPUT", "PRICE_OUTPUT"])
def test_one_price_without_the_other_is_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(ConfigError, match=f"LIVE_MEMORY_{name} is set but"):
        load(tmp_path, **{f"LIVE_MEMORY_{name}": "3"})


def test_negative_price_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="LIVE_MEMORY_PRICE_INPUT"):
        load(tmp_path, LIVE_MEMORY_PRICE_INPUT="-1", LIVE_MEMORY_PRICE_OUTPUT="1")


def test_floor_at_or_above_threshold_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"LIVE_MEMORY_COMPACTION_FLOOR \(0.7\) must be below"):
        load(tmp_path, LIVE_MEMORY_COMPACTION_THRESHOLD="0.7", LIVE_MEMORY_COMPACTION_FLOOR="0.7")


def test_blank_variable_counts_as_unset(tmp_path: Path) -> None:
    settings = load(tmp_path, LIVE_MEMORY_PORT="  ", LIVE_MEMORY_TOKEN="")
    assert settings.port == 7711
    assert settings.token is None


def test_log_file_and_insights_root_are_anchored_to_home_and_data_dir(tmp_path: Path) -> None:
    settings = load(
        tmp_path,
        LIVE_MEMORY_DATA_DIR=str(tmp_path / "data"),
        LIVE_MEMORY_LOG_FILE="logs/live-memory.log",
        LIVE_MEMORY_INSIGHTS_ROOT="~/insights",
    )
    assert settings.log_file == tmp_path / "data" / "logs" / "live-memory.log"
    assert settings.insights_root == tmp_path / "home" / "insights"


def test_defaults_come_from_constants(tmp_path: Path) -> None:
    settings = load(tmp_path)
    assert settings.host == "127.0.0.1"
    assert settings.port == 7711
    assert settings.compaction_threshold == 0.85
    assert settings.compaction_floor == 0.6
    assert settings.default_timeout_s == 60.0
    assert settings.max_answer_tokens == 2048
    assert settings.concurrency == "parallel"
    assert settings.keep_warm is False
    assert settings.keep_warm_interval_s is None
    assert settings.watcher == "off"
    assert settings.log_level == "info"
    assert settings.use_subscription is True
    assert settings.data_dir == tmp_path / "home" / ".local" / "share" / "live-memory"


def test_openai_extra_body_errors_say_it_must_be_a_json_object(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"LIVE_MEMORY_OPENAI_EXTRA_BODY must be a JSON object"):
        load(tmp_path, LIVE_MEMORY_OPENAI_EXTRA_BODY='"just a string"')
    with pytest.raises(ConfigError, match=r"cannot set messages, model: Live Memory sends"):
        load(tmp_path, LIVE_MEMORY_OPENAI_EXTRA_BODY='{"model": 1, "messages": []}')
