"""Building the configured Provider from Settings (the provider package never sees Settings)."""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Callable

from live_memory.config import CloudPlatform, Settings, constants
from live_memory.errors import ConfigError, NoProviderConfigured
from live_memory.providers import (
    LazyProvider,
    OAuthTokenSource,
    Provider,
    endpoint_kind,
    sends_key_as_bearer,
    unsupported_endpoint_problem,
)

__all__ = ["make_provider"]

logger = logging.getLogger(__name__)

_AUTH_TOKEN_SOURCE = "ANTHROPIC_AUTH_TOKEN"  # a key from there is a bearer token
_NO_PROVIDER = (
    "no model provider is configured: set LIVE_MEMORY_API_KEY (or ANTHROPIC_API_KEY / "
    "OPENAI_API_KEY), or LIVE_MEMORY_PROVIDER=openai with LIVE_MEMORY_BASE_URL for a local server"
)


def make_provider(settings: Settings) -> Provider:
    """The Provider for `settings.provider`, pointed at its base URL (or the default).

    With a Claude subscription credential, the token is refreshed before it expires and kept in
    `<data_dir>/oauth.json` (see `oauth`). Raises NoProviderConfigured when no provider is set
    (the message says what to set), and ConfigError for a provider name we do not know, a
    base URL we cannot talk to (Bedrock's runtime API, Vertex AI without Claude Code's platform
    variables: the message says what to use), or a cloud platform whose extra is not installed.
    """
    if settings.provider is None:
        raise NoProviderConfigured(settings.provider_problem or _NO_PROVIDER)
    if settings.provider == constants.PROVIDER_ANTHROPIC:
        base_url = settings.base_url or constants.ANTHROPIC_DEFAULT_BASE_URL
        build = _anthropic(settings, base_url)
        return LazyProvider(constants.PROVIDER_ANTHROPIC, base_url, build)
    if settings.provider == constants.PROVIDER_OPENAI:
        base_url = settings.base_url or constants.OPENAI_DEFAULT_BASE_URL

        def build_openai() -> Provider:
            # The SDK is slow to import: load the adapter only when it is first needed.
            from live_memory.providers import OpenAIProvider  # noqa: PLC0415

            return OpenAIProvider(base_url, settings.api_key, extra_body=settings.openai_extra_body)

        return LazyProvider(constants.PROVIDER_OPENAI, base_url, build_openai)
    raise ConfigError(
        f"LIVE_MEMORY_PROVIDER must be {constants.PROVIDER_ANTHROPIC!r} or "
        f"{constants.PROVIDER_OPENAI!r}, got {settings.provider!r}"
    )


def _anthropic(settings: Settings, base_url: str) -> Callable[[], Provider]:
    """Validate now (a bad endpoint or missing credential fails at start-up or reload);
    build the SDK-backed adapter later, when the first request needs it."""
    if settings.cloud is not None:
        return _cloud(settings.cloud, base_url, settings.api_key)
    kind = endpoint_kind(constants.PROVIDER_ANTHROPIC, settings.base_url, settings.model)
    problem = unsupported_endpoint_problem(kind, base_url)
    if problem is not None:
        raise ConfigError(problem)
    if settings.subscription:
        # A Claude subscription OAuth token: a bearer token plus a beta flag, not a key.
        token: str | OAuthTokenSource | None = settings.api_key
        if token is None and settings.credentials_file is not None:
            token = OAuthTokenSource(
                settings.credentials_file,
                settings.data_dir / constants.OAUTH_STORE_FILE_NAME,
                token_url=settings.oauth_token_url or constants.CLAUDE_OAUTH_TOKEN_URL,
            )
        if token is None:
            raise NoProviderConfigured(
                "the Claude subscription credential was not found; set LIVE_MEMORY_API_KEY"
            )
        beta = {"anthropic-beta": constants.ANTHROPIC_OAUTH_BETA}
        bearer: str | OAuthTokenSource | None = token
        key: str | None = None
    elif settings.api_key_source == _AUTH_TOKEN_SOURCE or sends_key_as_bearer(kind):
        bearer, key, beta = settings.api_key, None, {}
    else:
        bearer, key, beta = None, settings.api_key, {}

    def build() -> Provider:
        from live_memory.providers import AnthropicProvider  # noqa: PLC0415

        return AnthropicProvider(base_url, key, auth_token=bearer, default_headers=beta or None)

    return build


# What each platform's SDK client needs installed (the anthropic extras `bedrock`, `vertex`).
_EXTRA_MODULES = {"bedrock": ("boto3", "botocore"), "vertex": ("google.auth",)}


def _cloud(cloud: CloudPlatform, base_url: str, bedrock_key: str | None) -> Callable[[], Provider]:
    """Anthropic's models on Bedrock or Vertex, with the platform's own credentials."""
    missing = [m for m in _EXTRA_MODULES[cloud.name] if not _installed(m)]
    if missing:
        variable = f"CLAUDE_CODE_USE_{cloud.name.upper()}"
        raise ConfigError(
            f"{variable} is set, but {', '.join(missing)} is not installed: install Live "
            f"Memory with its {cloud.name} extra (pip install 'live-memory[{cloud.name}]')"
        )

    def build() -> Provider:
        from live_memory.providers import AnthropicProvider  # noqa: PLC0415

        return AnthropicProvider(
            base_url,
            bedrock_key,
            platform=cloud.name,
            region=cloud.region,
            project_id=cloud.project_id,
            aws_profile=cloud.aws_profile,
        )

    return build


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # its parent package (google) is not there either
        return False
