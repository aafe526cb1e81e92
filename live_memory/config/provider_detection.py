"""Which model provider to use, with which endpoint and credential.

Order: an explicit `LIVE_MEMORY_PROVIDER` wins. Otherwise an Anthropic key
(`LIVE_MEMORY_API_KEY` starting with `sk-ant-`, `ANTHROPIC_API_KEY`, `ANTHROPIC_AUTH_TOKEN`)
picks anthropic; any other key or endpoint (`LIVE_MEMORY_API_KEY`, `OPENAI_API_KEY`,
`OPENAI_BASE_URL`, `LIVE_MEMORY_BASE_URL`) picks openai; only when no key or endpoint is set at
all does a Claude Code subscription credential (`use_subscription`) pick anthropic — every
plugin user has Claude Code, so letting the credential outrank an explicit OpenAI key would make
OpenAI auto-detection dead code. Token handling belongs to the OAuth module; this only detects.

Claude Code's cloud platforms come before the keys: `CLAUDE_CODE_USE_BEDROCK` (then
`CLAUDE_CODE_USE_VERTEX`) picks Anthropic's models on Bedrock or Vertex with Claude Code's own
variables (AWS_REGION, AWS_PROFILE, AWS_BEARER_TOKEN_BEDROCK, ANTHROPIC_BEDROCK_BASE_URL;
CLOUD_ML_REGION, ANTHROPIC_VERTEX_PROJECT_ID, ANTHROPIC_VERTEX_BASE_URL) and its cheap model
(ANTHROPIC_DEFAULT_HAIKU_MODEL), unless Live Memory's own provider, key or base URL says else.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import orjson

from live_memory.config import constants as C
from live_memory.config.settings import CloudPlatform
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
    cloud: CloudPlatform | None = None
    model: str | None = None
    """The platform's default model (a cloud names its models its own way)."""


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
    if explicit != C.PROVIDER_OPENAI and api_key is None and base_url is None:
        cloud = _cloud_choice(environ)
        if cloud is not None:
            return cloud
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


def _cloud_choice(environ: Mapping[str, str]) -> ProviderChoice | None:
    """Anthropic on the cloud platform Claude Code is set to use, or None."""
    model = _env(environ, "ANTHROPIC_DEFAULT_HAIKU_MODEL") or _env(
        environ, "ANTHROPIC_SMALL_FAST_MODEL"
    )
    if _flag(environ, "CLAUDE_CODE_USE_BEDROCK"):
        region = _env(environ, "AWS_REGION") or _env(environ, "AWS_DEFAULT_REGION")
        if region is None:
            problem = "CLAUDE_CODE_USE_BEDROCK is set but AWS_REGION is not (e.g. us-east-1)"
            return ProviderChoice(None, problem=problem)
        url = _env_url(environ, "ANTHROPIC_BEDROCK_BASE_URL")
        # A Bedrock API key and an AWS profile exclude each other (the SDK refuses both).
        token = _env_secret(environ, "AWS_BEARER_TOKEN_BEDROCK")
        profile = None if token else _env(environ, "AWS_PROFILE")
        return ProviderChoice(
            C.PROVIDER_ANTHROPIC,
            url or f"https://bedrock-runtime.{region}.amazonaws.com",
            token,
            "AWS_BEARER_TOKEN_BEDROCK" if token else None,
            cloud=CloudPlatform("bedrock", region, aws_profile=profile),
            model=model or C.BEDROCK_DEFAULT_MODEL,
        )
    if _flag(environ, "CLAUDE_CODE_USE_VERTEX"):
        region = _env(environ, "CLOUD_ML_REGION")
        project = _env(environ, "ANTHROPIC_VERTEX_PROJECT_ID")
        if region is None or project is None:
            missing = "CLOUD_ML_REGION" if region is None else "ANTHROPIC_VERTEX_PROJECT_ID"
            return ProviderChoice(
                None, problem=f"CLAUDE_CODE_USE_VERTEX is set but {missing} is not"
            )
        url = _env_url(environ, "ANTHROPIC_VERTEX_BASE_URL") or _vertex_url(region)
        return ProviderChoice(
            C.PROVIDER_ANTHROPIC,
            url,
            cloud=CloudPlatform("vertex", region, project_id=project),
            model=model or C.VERTEX_DEFAULT_MODEL,
        )
    return None


def _vertex_url(region: str) -> str:
    # As the SDK and Claude Code reach Vertex: global and multi-region endpoints, else regional.
    if region == "global":
        return "https://aiplatform.googleapis.com/v1"
    if region in ("us", "eu"):
        return f"https://aiplatform.{region}.rep.googleapis.com/v1"
    return f"https://{region}-aiplatform.googleapis.com/v1"


def _flag(environ: Mapping[str, str], name: str) -> bool:
    return (_env(environ, name) or "").lower() in ("1", "true", "yes", "on")


def _first(*pairs: tuple[str | None, str | None]) -> tuple[str | None, str | None]:
    for value, source in pairs:
        if value is not None:
            return value, source
    return None, None
