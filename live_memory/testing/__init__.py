"""Test support that ships with the library: a fake model provider over real HTTP.

Other packages' tests import from here (`from live_memory.testing import FakeProvider, Text`).
"""

from __future__ import annotations

from live_memory.testing.fake_oauth import FakeTokenEndpoint
from live_memory.testing.fake_provider import FakeProvider, Responder
from live_memory.testing.fake_replies import (
    CacheStats,
    Call,
    Error,
    Malformed,
    Recorded,
    Reply,
    Text,
    ToolUse,
    Wire,
)

__all__ = [
    "CacheStats",
    "Call",
    "Error",
    "FakeProvider",
    "FakeTokenEndpoint",
    "Malformed",
    "Recorded",
    "Reply",
    "Responder",
    "Text",
    "ToolUse",
    "Wire",
]
