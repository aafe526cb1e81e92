"""Shared helpers for the knowledge tests: the real Claude Code transcript and edited copies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.fixtures import TRANSCRIPT as FIXTURE


def fixture_records() -> list[dict[str, object]]:
    """The fixture transcript, one dict per line."""
    return [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]


def write_transcript(path: Path, records: list[dict[str, object]], *extra_lines: str) -> Path:
    lines = [json.dumps(record) for record in records]
    path.write_text("\n".join([*lines, *extra_lines]) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    """A private copy of the fixture transcript (tests may append to it)."""
    copy = tmp_path / "3c3d112b-e3b7-4cb3-9afd-52072cb2a140.jsonl"
    copy.write_bytes(FIXTURE.read_bytes())
    return copy
