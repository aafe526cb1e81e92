"""Which model provider to use, with which endpoint and credential.

Order: an explicit `LIVE_MEMORY_PROVIDER` wins. Otherwise an Anthropic key
(`LIVE_MEMORY_API_KEY` starting with `sk-ant-`, `ANTHROPIC_API_KEY`, `ANTHROPIC_AUTH_TOKEN`)
picks anthropic; any other key or endpoint (`LIVE_MEMORY_API_KEY`, `OPENAI_API_KEY`,
`OPENAI_BASE_URL`, `LIVE_MEMORY_BASE_URL`) picks openai; only when no key or endpoint is set at
all does a Claude Code subscription credential (`use_subscription`) pick anthropic — every
plugin user has Claude Code, so letting the credential outrank an explicit OpenAI key would make
OpenAI auto-detection dead code. Token handling belongs to the OAuth module; this only detects.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import orjson

from live_memory.config import constants as C
from live_memory.config.variables import parse_secret, parse_url
from live_memory.regular_file import read_regular

__all__ = ["NO_PROVIDER_PROBLEM", "ProviderChoice", "credentials_file", "detect_provider"]

logger = logging.getLogger(__name__)

NO_PROVIDER_PROBLEM: Final = (
    "No model provider configured: set ANTHROPIC_API_KEY (or LIVE_MEMORY_PROVIDER=anthropic "
    "with LIVE_MEMORY_API_KEY), or OPENAI_API_KEY / LIVE_MEMORY_BASE_URL for an "
    "OpenAI-compatible endpoint."
)


@dataclass(frozen=True, slots=True)
class ProviderChoice:
    """The outcome of provider detection."""

    provider: str | None
    base_url: str | None = None
    api_key: str | None = None
    api_key_source: str | None = None
    """The variable the key came from (`ANTHROPIC_AUTH_TOKEN` means a bearer token)."""
    subscription: bool = False
    credentials_file: Path | None = None
    problem: str | None = None


def _env(environ: Mapping[str, str], name: str) -> str | None:
    value = environ.get(name, "")
    return value.strip() or None


def _env_secret(environ: Mapping[str, str], name: str) -> str | None:
    raw = _env(environ, name)
    return None if raw is None else parse_secret(raw, name)


def _env_url(environ: Mapping[str, str], name: str) -> str | None:
    raw = _env(environ, name)
    return None if raw is None else parse_url(raw, name)


def credentials_file(environ: Mapping[str, str], home: Path) -> Path | None:
    """The Claude Code OAuth credential file, if one with an access token exists."""
    config_dir = _env(environ, C.CLAUDE_CONFIG_DIR_ENV)
    candidates = [Path(config_dir)] if config_dir else []
    candidates.append(home / C.CLAUDE_HOME_DIR_NAME)
    for directory in candidates:
        path = directory / C.CLAUDE_CREDENTIALS_FILE_NAME
        try:
            document = orjson.loads(read_regular(path, C.CREDENTIALS_MAX_BYTES))
        except FileNotFoundError:
            continue
        except (OSError, ValueError) as exc:  # ValueError: bad JSON, or a NUL in the path
            logger.warning("ignoring unreadable Claude credential file %s: %s", path, exc)
            continue
        oauth = document.get("claudeAiOauth") if isinstance(document, dict) else None
        token = oauth.get("accessToken") if isinstance(oauth, dict) else None
        if isinstance(token, str) and token.strip():
            return path
    return None


def detect_provider(
    environ: Mapping[str, str],
    *,
    explicit: str | None,
    api_key: str | None,
    api_key_source: str | None,
    base_url: str | None,
    use_subscription: bool,
    home: Path,
) -> ProviderChoice:
    """Pick the provider. `api_key` / `base_url` are the LIVE_MEMORY_* layered values.

    Raises ConfigError when a provider variable it consults (`ANTHROPIC_BASE_URL`, ...) is
    malformed.
    """
    anthropic_key = _env_secret(environ, "ANTHROPIC_API_KEY")
    anthropic_token = _env_secret(environ, "ANTHROPIC_AUTH_TOKEN")
    openai_key = _env_secret(environ, "OPENAI_API_KEY")
    provider = explicit
    if provider is None:
        if (
            (api_key is not None and api_key.startswith(C.ANTHROPIC_KEY_PREFIX))
            or anthropic_key
            or anthropic_token
        ):
            provider = C.PROVIDER_ANTHROPIC
        elif api_key or openai_key or base_url or _env(environ, "OPENAI_BASE_URL"):
            provider = C.PROVIDER_OPENAI
    if provider == C.PROVIDER_OPENAI:
        key, source = _first((api_key, api_key_source), (openai_key, "OPENAI_API_KEY"))
        url = base_url or _env_url(environ, "OPENAI_BASE_URL")
        return ProviderChoice(provider, url, key, source)
    if provider == C.PROVIDER_ANTHROPIC or provider is None:
        key, source = _first(
            (api_key, api_key_source),
            (anthropic_key, "ANTHROPIC_API_KEY"),
            (anthropic_token, "ANTHROPIC_AUTH_TOKEN"),
        )
        credential = None
        if key is None and use_subscription:
            credential = credentials_file(environ, home)
        if provider is None and credential is None:
            return ProviderChoice(None, problem=NO_PROVIDER_PROBLEM)
        url = base_url or _env_url(environ, "ANTHROPIC_BASE_URL")
        subscription = credential is not None
        return ProviderChoice(C.PROVIDER_ANTHROPIC, url, key, source, subscription, credential)
    raise AssertionError(f"unknown provider {provider!r}")  # the parser allows only the two


def _first(*pairs: tuple[str | None, str | None]) -> tuple[str | None, str | None]:
    for value, source in pairs:
        if value is not None:
            return value, source
    return None, None
