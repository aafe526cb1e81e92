"""What the fake provider can be told to answer, and what it records.

    fake.script(Text("hello"), ToolUse("Read", {"file_path": "a.py"}), Error.rate_limited())

Each reply may carry `delay_s`, a latency the fake waits before answering (to exercise client
timeouts). Replies are wire-neutral: the fake renders each in the format of the route it is on.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "CacheStats",
    "Call",
    "Error",
    "Malformed",
    "Recorded",
    "Reply",
    "Text",
    "ToolUse",
    "Wire",
]

Wire = Literal["anthropic", "openai"]


@dataclass(frozen=True, slots=True)
class Text:
    """A plain text answer."""

    text: str
    delay_s: float = 0.0
    truncated: bool = False
    """Report the answer as cut off by the token limit (`max_tokens` / `length`)."""
    hold: threading.Event | None = None
    """Answer only once the test sets this event (a reply held for as long as a test needs,
    not for a guessed number of seconds)."""


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call inside a ToolUse reply."""

    name: str
    arguments: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ToolUse:
    """A reply asking for one tool call (or several, via `more` or `ToolUse.several`)."""

    name: str
    arguments: Mapping[str, object] = field(default_factory=dict)
    more: tuple[Call, ...] = ()
    text: str = ""
    """Text the model says before its calls."""
    delay_s: float = 0.0

    @property
    def calls(self) -> tuple[Call, ...]:
        return (Call(self.name, self.arguments), *self.more)

    @classmethod
    def several(cls, *calls: Call, text: str = "", delay_s: float = 0.0) -> ToolUse:
        first, *rest = calls
        return cls(first.name, first.arguments, tuple(rest), text, delay_s)


@dataclass(frozen=True, slots=True)
class Error:
    """An HTTP error in the wire format's error shape."""

    status: int
    type: str = "api_error"
    message: str = "fake provider error"
    retry_after_s: float | None = None
    """Sent as a `retry-after` header when set."""
    delay_s: float = 0.0

    @classmethod
    def rate_limited(cls, retry_after_s: float | None = None) -> Error:
        return cls(429, "rate_limit_error", "rate limit exceeded", retry_after_s)

    @classmethod
    def overloaded(cls) -> Error:
        return cls(529, "overloaded_error", "Overloaded")

    @classmethod
    def server(cls) -> Error:
        return cls(500, "api_error", "Internal server error")

    @classmethod
    def prompt_too_long(cls) -> Error:
        return cls(
            400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"
        )

    @classmethod
    def unauthorized(cls) -> Error:
        return cls(401, "authentication_error", "invalid x-api-key")


@dataclass(frozen=True, slots=True)
class Malformed:
    """A 200 answer whose body is not what the wire format promises."""

    body: bytes = b'{"id": "broken", "content": [unterminated'
    delay_s: float = 0.0


Reply = Text | ToolUse | Error | Malformed


@dataclass(frozen=True, slots=True)
class Recorded:
    """One request the fake received."""

    path: str
    body: dict[str, Any]
    """The decoded JSON body ({} when it was not JSON)."""
    headers: dict[str, str]
    """Lower-case header names."""
    wire: Wire
    at: float
    """`time.monotonic()` when it arrived."""
    raw: bytes = b""
    """The body exactly as sent, for byte-identity checks."""


@dataclass(frozen=True, slots=True)
class CacheStats:
    """Totals over every answered request since the last reset."""

    requests: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0
    """Prompt tokens served from the simulated cache."""
    cache_write_tokens: int = 0

    @property
    def hit_ratio(self) -> float:
        return self.cached_tokens / self.prompt_tokens if self.prompt_tokens else 0.0
