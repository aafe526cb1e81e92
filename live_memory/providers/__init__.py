"""Model providers: neutral chat types, one adapter per wire format, retries and pricing.

Other packages import from here, never from the inner modules. Nothing here reads the app's
settings: the provider factory (agent.provider_factory) and the cache policy (prompt_cache)
feed it plain values.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from live_memory.providers.endpoint import (
    endpoint_kind,
    is_local_endpoint,
    prompt_cache_retention_for,
    sends_key_as_bearer,
    supports_1h_cache_ttl,
    unsupported_endpoint_problem,
)
from live_memory.providers.lazy import LazyProvider
from live_memory.providers.oauth import OAuthTokenSource
from live_memory.providers.pricing import (
    Pricing,
    context_tokens_for,
    cost_usd,
    min_cacheable_tokens,
    price_for,
)
from live_memory.providers.probe import EndpointFacts, ProbeStatus, probe_endpoint
from live_memory.providers.text_tool_call import TextReply, read_text_reply
from live_memory.providers.types import (
    Block,
    CacheTtl,
    CallTimings,
    ChatRequest,
    ChatResponse,
    Message,
    Provider,
    StreamTap,
    SystemBlock,
    TextBlock,
    ToolCall,
    ToolResultBlock,
    ToolSpec,
    Usage,
)

if TYPE_CHECKING:
    from live_memory.providers.anthropic_adapter import AnthropicProvider
    from live_memory.providers.openai_adapter import OpenAIProvider


def __getattr__(name: str) -> Any:
    # The SDKs take seconds to import; load an adapter only when it is asked for.
    if name == "AnthropicProvider":
        from live_memory.providers.anthropic_adapter import AnthropicProvider  # noqa: PLC0415 (slow SDK import)

        return AnthropicProvider
    if name == "OpenAIProvider":
        from live_memory.providers.openai_adapter import OpenAIProvider  # noqa: PLC0415 (slow SDK import)

        return OpenAIProvider
    raise AttributeError(name)


__all__ = [
    "AnthropicProvider",
    "Block",
    "CacheTtl",
    "CallTimings",
    "ChatRequest",
    "ChatResponse",
    "EndpointFacts",
    "LazyProvider",
    "Message",
    "OAuthTokenSource",
    "OpenAIProvider",
    "Pricing",
    "ProbeStatus",
    "Provider",
    "StreamTap",
    "SystemBlock",
    "TextBlock",
    "TextReply",
    "ToolCall",
    "ToolResultBlock",
    "ToolSpec",
    "Usage",
    "context_tokens_for",
    "cost_usd",
    "endpoint_kind",
    "is_local_endpoint",
    "min_cacheable_tokens",
    "price_for",
    "probe_endpoint",
    "prompt_cache_retention_for",
    "read_text_reply",
    "sends_key_as_bearer",
    "supports_1h_cache_ttl",
    "unsupported_endpoint_problem",
]
