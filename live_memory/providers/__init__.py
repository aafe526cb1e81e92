"""Model providers: neutral chat types, one adapter per wire format, retries and pricing.

Other packages import from here, never from the inner modules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from live_memory.providers.cache_economics import (
    CacheDecision,
    CacheEconomics,
    cache_economics_for,
)
from live_memory.providers.endpoint import (
    EndpointKind,
    endpoint_kind,
    prompt_cache_retention_for,
    supports_1h_cache_ttl,
)
from live_memory.providers.factory import make_provider
from live_memory.providers.keep_warm_policy import (
    CachePolicy,
    cache_policy_for,
    cache_policy_for_settings,
    keep_warm_interval_for,
)
from live_memory.providers.oauth import OAuthTokenSource
from live_memory.providers.pricing import (
    Pricing,
    context_tokens_for,
    cost_usd,
    min_cacheable_tokens,
    price_for,
    price_for_settings,
    pricing_checked,
)
from live_memory.providers.retry import RetryPolicy
from live_memory.providers.text_tool_call import UNPARSED_ARGUMENTS_KEY
from live_memory.providers.types import (
    BearerTokenSource,
    Block,
    CacheTtl,
    ChatRequest,
    ChatResponse,
    Message,
    Provider,
    Role,
    StopReason,
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
    "UNPARSED_ARGUMENTS_KEY",
    "AnthropicProvider",
    "BearerTokenSource",
    "Block",
    "CacheDecision",
    "CacheEconomics",
    "CachePolicy",
    "CacheTtl",
    "ChatRequest",
    "ChatResponse",
    "EndpointKind",
    "Message",
    "OAuthTokenSource",
    "OpenAIProvider",
    "Pricing",
    "Provider",
    "RetryPolicy",
    "Role",
    "StopReason",
    "SystemBlock",
    "TextBlock",
    "ToolCall",
    "ToolResultBlock",
    "ToolSpec",
    "Usage",
    "cache_economics_for",
    "cache_policy_for",
    "cache_policy_for_settings",
    "context_tokens_for",
    "cost_usd",
    "endpoint_kind",
    "keep_warm_interval_for",
    "make_provider",
    "min_cacheable_tokens",
    "price_for",
    "price_for_settings",
    "pricing_checked",
    "prompt_cache_retention_for",
    "supports_1h_cache_ttl",
]
