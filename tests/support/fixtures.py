"""Paths of the recorded fixtures kept in the repository (tests/fixtures/, see its README)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["FIXTURES", "HOOK_PAYLOADS", "LOCAL_MODEL", "TRANSCRIPT"]

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
HOOK_PAYLOADS = FIXTURES / "claude-code-hook-payloads.json"
TRANSCRIPT = FIXTURES / "claude-code-transcript.jsonl"
LOCAL_MODEL = FIXTURES / "local-model"
