"""Neutral request and response types shared by every provider adapter.

The agent loop, the prompt layout and keep-warm speak only these types; each adapter
translates them to one wire format (Anthropic Messages or OpenAI chat completions).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

import orjson

from live_memory.config import constants as C

__all__ = [
    "BearerTokenSource",
    "Block",
    "CacheTtl",
    "CallTimings",
    "ChatRequest",
    "ChatResponse",
    "Message",
    "Provider",
    "Role",
    "StopReason",
    "StreamTap",
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


class StreamTap:
    """What a streaming call has received so far: read by the caller that gives up on it at
    a deadline (the partial answer is kept) and by progress reports. Single writer (the call);
    the readers take a snapshot of plain values, never hold it across awaits."""

    __slots__ = ("_chars", "_parts", "first_token_s", "pieces")

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._chars = 0
        self.first_token_s: float | None = None
        self.pieces = 0

    def add_text(self, piece: str) -> None:
        # Bounded like an answer: a runaway stream past the cap is not held twice.
        if self._chars < C.STREAM_TAP_MAX_CHARS:
            self._parts.append(piece[: C.STREAM_TAP_MAX_CHARS - self._chars])
            self._chars += len(self._parts[-1])
        self.pieces += 1

    @property
    def text(self) -> str:
        return "".join(self._parts)

    def reset(self) -> None:
        """A retried attempt starts its answer afresh."""
        self._parts, self._chars, self.pieces = [], 0, 0


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
    tap: StreamTap | None = field(default=None, compare=False)
    """Where a streaming adapter reports what it has received so far."""

    def prompt_chars(self) -> int:
        """Characters of everything the provider bills as prompt: system, text, tool results,
        and tool calls as their name and compact JSON arguments (as the adapters send them).
        For calibration and for estimating a prompt a server did not report."""
        chars = sum(len(b.text) for b in self.system)
        for message in self.messages:
            for block in message.blocks:
                if isinstance(block, TextBlock):
                    chars += len(block.text)
                elif isinstance(block, ToolResultBlock):
                    chars += len(block.content)
                else:
                    chars += len(block.name) + len(orjson.dumps(dict(block.arguments)))
        return chars


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
    cache_unreported_tokens: int = 0
    """Prompt tokens of calls whose endpoint reported no cache figure at all (llama-cpp-python
    gives neither `cached_tokens` nor `timings`): their reuse is unknown, not zero."""

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.cache_unreported_tokens + other.cache_unreported_tokens,
        )

    @property
    def cache_hit_ratio(self) -> float | None:
        """Cached share of the prompt tokens whose cache use was reported; None = unknown."""
        known = self.input_tokens - self.cache_unreported_tokens
        if known <= 0:
            return None if self.input_tokens else 0.0
        return self.cache_read_tokens / known


@dataclass(frozen=True, slots=True)
class CallTimings:
    """How long one call took and how much of its prompt the server re-evaluated.

    From the server's own `timings` (llama.cpp: `prompt_n`, `cache_n`, `prompt_ms`,
    `predicted_n`, `predicted_ms`) where it sends them, else measured on our side: the time to
    the first streamed token stands in for prefill, the rest for generation.
    """

    prompt_tokens: int
    evaluated_tokens: int | None
    """Prompt tokens the server computed (not served from its KV cache); None = not said."""
    cached_tokens: int | None
    prefill_s: float | None
    generated_tokens: int
    generate_s: float | None
    first_token_s: float | None
    """Wall time from sending the request to the first streamed token."""
    wall_s: float
    from_server: bool
    """True when the figures are the server's `timings`, False when measured here."""


@dataclass(frozen=True, slots=True)
class ChatResponse:
    blocks: tuple[TextBlock | ToolCall, ...]
    stop_reason: StopReason
    usage: Usage
    model: str
    raw_stop_reason: str | None = field(default=None)
    timings: CallTimings | None = None
    usage_estimated: bool = False
    """True when the endpoint sent no usage (a stream without it) and `usage` is our estimate."""

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
