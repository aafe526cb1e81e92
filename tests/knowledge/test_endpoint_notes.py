"""Endpoint notes: what an endpoint was seen to do, kept across a reopen (a restart), bounded."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from live_memory.config import constants as C
from live_memory.knowledge import EndpointNotes, KnowledgeError


def test_a_note_outlives_the_store_and_is_read_from_memory(tmp_path: Path) -> None:
    path = tmp_path / "endpoints.sqlite3"
    with EndpointNotes(path) as notes:
        assert notes.get("http://gw/v1", "m", "forced_tool") is None
        assert notes.note("http://gw/v1", "m", "forced_tool", "ignored") is True
        assert notes.note("http://gw/v1", "m", "forced_tool", "ignored") is False  # known
    with EndpointNotes(path) as again:
        assert again.get("http://gw/v1", "m", "forced_tool") == "ignored"
        assert again.get("http://gw/v1", "other-model", "forced_tool") is None  # per model
        [note] = again.notes_for("http://gw/v1", "m")
        assert (note.fact, note.value) == ("forced_tool", "ignored")


def test_notes_are_capped_the_oldest_forgotten_first(tmp_path: Path) -> None:
    ticks = itertools.count(1)
    path = tmp_path / "endpoints.sqlite3"
    with EndpointNotes(path, clock=lambda: float(next(ticks))) as notes:
        for i in range(C.ENDPOINT_NOTES_MAX + 5):
            notes.note(f"http://e{i}/v1", "m", "forced_tool", "ignored")
        assert notes.get("http://e0/v1", "m", "forced_tool") is None
        last = f"http://e{C.ENDPOINT_NOTES_MAX + 4}/v1"
        assert notes.get(last, "m", "forced_tool") == "ignored"
    with EndpointNotes(path) as again:
        assert again.get("http://e4/v1", "m", "forced_tool") is None
        assert again.get("http://e5/v1", "m", "forced_tool") == "ignored"


def test_a_huge_name_is_cut_and_a_closed_store_refuses(tmp_path: Path) -> None:
    notes = EndpointNotes(tmp_path / "endpoints.sqlite3")
    huge = "x" * 100_000
    notes.note(huge, huge, "forced_tool", huge)
    cut = huge[: C.ENDPOINT_NOTE_MAX_CHARS]
    assert notes.get(cut, cut, "forced_tool") == cut
    notes.close()
    with pytest.raises(KnowledgeError):
        notes.note("http://gw/v1", "m", "forced_tool", "honoured")
