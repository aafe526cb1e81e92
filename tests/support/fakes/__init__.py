"""Test support (not shipped in the wheel): a fake model provider over real HTTP.

Tests and benches import from here (`from tests.support.fakes import FakeProvider, Text`).
"""

from __future__ import annotations

from tests.support.fakes.fake_oauth import FakeTokenEndpoint
from tests.support.fakes.fake_provider import FakeProvider, Responder
from tests.support.fakes.fake_replies import (
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
