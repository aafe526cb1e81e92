"""Test support (not shipped in the wheel): a fake model provider over real HTTP, and a
replaying fake of a local model server (llama.cpp, llama-cpp-python, Ollama, vLLM, LM Studio).

Tests and benches import from here (`from tests.support.fakes import FakeProvider, Text`).
"""

from __future__ import annotations

from tests.support.fakes.fake_local_server import FakeLocalServer, Flavour, LocalResponder
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
from tests.support.fakes.local_behaviours import (
    Behaviour,
    CopiesLastAssistant,
    CopiesObservation,
    EchoesToolResult,
    Says,
    Structured,
    WritesCall,
    call_text,
    recorded,
    recorded_calls,
)

__all__ = [
    "Behaviour",
    "CacheStats",
    "Call",
    "CopiesLastAssistant",
    "CopiesObservation",
    "EchoesToolResult",
    "Error",
    "FakeLocalServer",
    "FakeProvider",
    "FakeTokenEndpoint",
    "Flavour",
    "LocalResponder",
    "Malformed",
    "Recorded",
    "Reply",
    "Responder",
    "Says",
    "Structured",
    "Text",
    "ToolUse",
    "Wire",
    "WritesCall",
    "call_text",
    "recorded",
    "recorded_calls",
]
