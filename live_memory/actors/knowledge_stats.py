"""The `knowledge` figures of `/stats`: the fact store, the window's projection of it, and
what retrieval did per question."""

from __future__ import annotations

import logging

from live_memory.agent import Services, resident_chars
from live_memory.knowledge import KnowledgeError
from live_memory.workspace import WorkspaceState

__all__ = ["knowledge_stats"]

logger = logging.getLogger(__name__)


def knowledge_stats(root: str, state: WorkspaceState, services: Services) -> dict[str, object]:
    """`store` (None without one), `resident`, `retrieval` (per question and hit rate),
    `freshness`; `index` is the structural index's slot (None until it reports)."""
    window = state.window
    store = services.stores.facts
    counts: dict[str, int] | None = None
    if store is not None:
        try:
            counts = store.counts(root)
        except KnowledgeError:
            logger.exception("fact store: no counts for %s", root)
    recall = dict(state.counters.recall)
    searches = recall["searches"]
    return {
        "store": counts,
        "resident": {
            "facts": len(window.ledger),
            "chars": sum(len(f.text) + 3 for f in window.ledger),
            "max_chars": resident_chars(services),
        },
        "retrieval": recall
        | {
            "per_question": round(recall["appended"] / searches, 2) if searches else 0.0,
            "hit_rate": round(recall["hits"] / searches, 4) if searches else 0.0,
        },
        "freshness": {
            "stored_demoted": counts["demoted"] if counts else None,
            "ledger_stale": sum(1 for f in window.ledger if f.stale),
            "retrieved_possibly_stale": recall["appended_stale"],
        },
        "index": None,
    }
