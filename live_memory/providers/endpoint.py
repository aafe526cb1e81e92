"""What kind of endpoint a base URL is, and what its prompt cache supports.

The wire format (`anthropic` / `openai`) says how to talk; the endpoint kind says what the cache
behind it does: Anthropic's API offers a 1-hour TTL, Bedrock's Mantle endpoint speaks Anthropic
Messages with a Bedrock API key sent as a bearer token, Bedrock's runtime and Vertex endpoints
need the cloud's request signing (reached with Claude Code's CLAUDE_CODE_USE_BEDROCK /
CLAUDE_CODE_USE_VERTEX, not by a base URL alone), OpenAI accepts a 24-hour
`prompt_cache_retention` on some models, DeepSeek caches on disk for hours.
"""

from __future__ import annotations

import ipaddress
import logging
import re
from typing import Literal
from urllib.parse import urlsplit

from live_memory.config import constants

__all__ = [
    "EndpointKind",
    "endpoint_kind",
    "is_local_endpoint",
    "prompt_cache_retention_for",
    "sends_key_as_bearer",
    "supports_1h_cache_ttl",
    "unsupported_endpoint_problem",
]

logger = logging.getLogger(__name__)

EndpointKind = Literal[
    "anthropic",
    "anthropic_gateway",
    "bedrock_mantle",
    "bedrock_runtime",
    "vertex",
    "openai",
    "azure_openai",
    "deepseek",
    "openai_compatible",
]

_ANTHROPIC_HOST = "api.anthropic.com"
_OPENAI_HOST = "api.openai.com"
_DEEPSEEK_HOST = "api.deepseek.com"
_AZURE_SUFFIXES = (".openai.azure.com", ".cognitiveservices.azure.com", ".services.ai.azure.com")
_DATED = re.compile(r"-\d{4}-\d{2}-\d{2}$")
# api.openai.com models that accept prompt_cache_retention="24h" (OpenAI's prompt-caching guide:
# gpt-4.1, gpt-5, gpt-5-codex, the gpt-5.1 family; gpt-5.5 and later accept only 24h). Others
# (gpt-4o, gpt-5-mini, ...) are left on the default rather than risk a 400; add a model here
# once OpenAI lists it.
_EXTENDED_RETENTION = re.compile(
    r"(gpt-4\.1|gpt-5|gpt-5-codex|gpt-5\.1(-codex|-codex-mini|-codex-max|-chat-latest)?"
    r"|gpt-5\.[5-9](-[a-z0-9.-]+)?|gpt-[6-9](\.\d+)?(-[a-z0-9.-]+)?)"
)


def endpoint_kind(provider: str, base_url: str | None, model: str = "") -> EndpointKind:
    """Classify the endpoint `provider` (`anthropic` / `openai`) reaches at `base_url`.

    No base URL means the provider's own API.
    """
    host = _host(base_url)
    if provider == constants.PROVIDER_ANTHROPIC:
        if host in ("", _ANTHROPIC_HOST):
            return "anthropic"
        if host.startswith("bedrock-mantle.") and host.endswith(".api.aws"):
            return "bedrock_mantle"
        if host.startswith("bedrock-runtime") and ".amazonaws.com" in host:
            return "bedrock_runtime"
        if "aiplatform" in host and host.endswith(".googleapis.com"):
            return "vertex"
        return "anthropic_gateway"
    if host == _DEEPSEEK_HOST or "deepseek" in model.lower():
        return "deepseek"
    if host in ("", _OPENAI_HOST):
        return "openai"
    if host.endswith(_AZURE_SUFFIXES):
        return "azure_openai"
    return "openai_compatible"


_LOCAL_NAMES = ("localhost", "host.docker.internal", "host.containers.internal")
_LOCAL_SUFFIXES = (".localhost", ".local", ".lan", ".internal", ".home.arpa")


def is_local_endpoint(provider: str, base_url: str | None) -> bool:
    """Whether `base_url` is a model server on this machine or the local network (llama.cpp,
    Ollama, vLLM, LM Studio): an OpenAI-compatible URL on a loopback, private or link-local
    address or a local name. Its cache is the server's own KV cache (no TTL to keep warm)
    and its time is the user's hardware's, not a cloud's."""
    if provider != constants.PROVIDER_OPENAI or endpoint_kind(provider, base_url) != (
        "openai_compatible"
    ):
        return False
    host = _host(base_url).strip("[]")
    if host in _LOCAL_NAMES or host.endswith(_LOCAL_SUFFIXES):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local


def supports_1h_cache_ttl(kind: EndpointKind) -> bool:
    """Whether `cache_control.ttl = "1h"` is safe to send.

    Only Anthropic's own API is known to accept it everywhere; a gateway or Bedrock may reject
    the field (a 400 on every question costs more than the 5-minute TTL ever would).
    """
    return kind == "anthropic"


def sends_key_as_bearer(kind: EndpointKind) -> bool:
    """Whether the API key goes out as `Authorization: Bearer` instead of `x-api-key`."""
    return kind == "bedrock_mantle"


def unsupported_endpoint_problem(kind: EndpointKind, base_url: str | None) -> str | None:
    """Why this endpoint cannot be used directly (names what to do instead), or None."""
    if kind == "bedrock_runtime":
        return (
            f"LIVE_MEMORY_BASE_URL {base_url} is Bedrock's runtime API, which needs AWS SigV4 "
            "signing: set CLAUDE_CODE_USE_BEDROCK=1 and AWS_REGION (as for Claude Code) "
            "instead, or use Bedrock's Anthropic endpoint "
            "https://bedrock-mantle.<region>.api.aws/anthropic with a Bedrock API key "
            "(LIVE_MEMORY_API_KEY), or a gateway that serves /v1/messages"
        )
    if kind == "vertex":
        return (
            f"LIVE_MEMORY_BASE_URL {base_url} is a Vertex AI endpoint, which needs Google Cloud "
            "credentials and its own request paths: set CLAUDE_CODE_USE_VERTEX=1, "
            "CLOUD_ML_REGION and ANTHROPIC_VERTEX_PROJECT_ID (as for Claude Code) instead, or "
            "point LIVE_MEMORY_BASE_URL at a gateway that serves /v1/messages"
        )
    return None


def prompt_cache_retention_for(base_url: str | None, model: str) -> str | None:
    """`"24h"` for api.openai.com models known to accept extended retention, else None."""
    if _host(base_url) not in ("", _OPENAI_HOST):
        return None
    name = _DATED.sub("", model.strip().lower())
    if _EXTENDED_RETENTION.fullmatch(name):
        return constants.OPENAI_PROMPT_CACHE_RETENTION
    return None


def _host(base_url: str | None) -> str:
    if not base_url:
        return ""
    return (urlsplit(base_url).hostname or "").lower()
