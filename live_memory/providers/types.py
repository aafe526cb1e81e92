"""Neutral request and response types shared by every provider adapter.

The agent loop, the prompt layout and keep-warm speak only these types; each adapter
translates them to one wire format (Anthropic Messages or OpenAI chat completions).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

__all__ = [
    "BearerTokenSource",
    "Block",
    "CacheTtl",
    "ChatRequest",
    "ChatResponse",
    "Message",
    "Provider",
    "Role",
    "StopReason",
    "SystemBlock",
    "TextBlock",
    "ToolCall",
    "ToolResultBlock",
    "ToolSpec",
    "Usage",
]

Role = Literal["user", "assistant"]
StopReason = Literal["end_turn", "tool_use", "max_tokens", "other"]
CacheTtl = Literal["5m", "1h"]
"""Anthropic's two prompt-cache lifetimes (`cache_control.ttl`)."""


@dataclass(frozen=True, slots=True)
class TextBlock:
    text: str


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool invocation the model asked for."""

    id: str
    name: str
    arguments: Mapping[str, object]


@dataclass(frozen=True, slots=True)
class ToolResultBlock:
    """Our answer to one ToolCall."""

    tool_call_id: str
    content: str
    is_error: bool = False


Block = TextBlock | ToolCall | ToolResultBlock


@dataclass(frozen=True, slots=True)
class Message:
    role: Role
    blocks: tuple[Block, ...]
    cache_breakpoint: bool = False
    """Place a cache breakpoint after this message (Anthropic `cache_control`)."""


@dataclass(frozen=True, slots=True)
class SystemBlock:
    text: str
    cache_breakpoint: bool = False


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """An exploration tool, defined Anthropic-natively (`input_schema`)."""

    name: str
    description: str
    input_schema: Mapping[str, object]


@dataclass(frozen=True, slots=True)
class ChatRequest:
    model: str
    system: tuple[SystemBlock, ...]
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...]
    max_tokens: int
    cache_key: str | None = None
    """Per-workspace prompt cache key (OpenAI `prompt_cache_key`)."""
    timeout_s: float | None = None
    cache_ttl: CacheTtl | None = None
    tool_choice: Literal["auto", "any"] = "auto"
    """`any` forces a tool call (the cold-memory guard); tools themselves never change."""


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage normalised across providers.

    `input_tokens` counts every prompt token, cached or not; `cache_read_tokens` and
    `cache_write_tokens` are the parts of it served from / written to the provider cache.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
        )


@dataclass(frozen=True, slots=True)
class ChatResponse:
    blocks: tuple[TextBlock | ToolCall, ...]
    stop_reason: StopReason
    usage: Usage
    model: str
    raw_stop_reason: str | None = field(default=None)

    @property
    def text(self) -> str:
        return "".join(b.text for b in self.blocks if isinstance(b, TextBlock))

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        return tuple(b for b in self.blocks if isinstance(b, ToolCall))


class Provider(Protocol):
    """One configured model endpoint. Adapters raise `ProviderError` subclasses."""

    @property
    def name(self) -> str: ...

    @property
    def endpoint(self) -> str: ...

    async def chat(self, request: ChatRequest) -> ChatResponse: ...

    async def aclose(self) -> None: ...


@runtime_checkable
class BearerTokenSource(Protocol):
    """A bearer token that changes over time (a refreshed subscription token)."""

    async def token(self) -> str:
        """The token to send now. Raises ProviderAuthError when there is none."""
        ...

    def invalidate(self, token: str) -> None:
        """The provider refused `token`; the next `token()` must find another."""
        ...
