"""Window <-> snapshot state. Raw file bytes and observation deltas are never persisted."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, cast

from live_memory.memory.ledger import revalidate_facts
from live_memory.memory.model import QA_KINDS, FileContext, LedgerFact, Turn
from live_memory.memory.window import Window

__all__ = ["window_from_state", "window_to_state"]


def window_to_state(window: Window) -> dict[str, object]:
    """The persistable part of a window (JSON-ready with orjson)."""
    return {
        "history": [
            {"role": t.role, "kind": t.kind, "text": t.text}
            for t in window.history
            if t.kind in QA_KINDS
        ],
        "files": [
            {"path": f.path, "sha256": f.sha256, "size": f.size, "state": f.state}
            for f in window.files.values()
            if f.state == "current"
        ],
        "ledger": [
            {
                "text": f.text,
                "sources": [list(s) for s in f.sources],
                "category": f.category,
                "stale": f.stale,
            }
            for f in window.ledger
        ],
        "chars_per_token": window.chars_per_token,
        "compactions": window.compactions,
        "last_compaction_at": window.last_compaction_at,
        "summaries_written": window.summaries_written,
    }


def window_from_state(
    root: str, state: Mapping[str, Any], current_hash: Callable[[str], str | None]
) -> Window:
    """Rebuild a window, dropping files that changed or vanished and demoting stale facts.

    `current_hash(path)` returns the file's sha256 now, or None if it is gone or unreadable.
    Raises KeyError/TypeError/ValueError on a malformed state (the caller quarantines it).
    """
    window = Window(root=root)
    for item in state.get("history", []):
        window.history.append(Turn(item["role"], item["kind"], str(item["text"])))
    hashes: dict[str, str | None] = {}
    for item in state.get("files", []):
        path = str(item["path"])
        hashes[path] = current_hash(path)
        if hashes[path] == item["sha256"]:
            window.files[path] = FileContext(path, item["sha256"], int(item["size"]), "read")
    facts = facts_from_state(state)
    for fact in facts:
        for path, _ in fact.sources:
            if path not in hashes:
                hashes[path] = current_hash(path)
    window.ledger = revalidate_facts(facts, hashes)
    window.chars_per_token = float(state.get("chars_per_token", window.chars_per_token))
    window.compactions = int(state.get("compactions", 0))
    last = state.get("last_compaction_at")
    window.last_compaction_at = float(cast(float, last)) if last is not None else None
    window.summaries_written = int(state.get("summaries_written", 0))
    window.files = {p: replace(f, last_used=i) for i, (p, f) in enumerate(window.files.items())}
    window.clock = len(window.files)
    return window


def facts_from_state(state: Mapping[str, Any]) -> list[LedgerFact]:
    """The ledger facts a snapshot holds, as written (no re-validation against the disk).

    Raises KeyError/TypeError/ValueError on a malformed snapshot.
    """
    return [
        LedgerFact(
            str(item["text"]),
            tuple((str(p), str(h)) for p, h in item.get("sources", [])),
            str(item.get("category", "architecture")),
            bool(item.get("stale", False)),
        )
        for item in state.get("ledger", [])
    ]
