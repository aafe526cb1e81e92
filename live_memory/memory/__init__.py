"""Window B and its pure logic: window, ledger, layout, compaction, commit rule, snapshots."""

from __future__ import annotations

from live_memory.memory.commit import CommitOutcome, decide_commit
from live_memory.memory.compaction import (
    DistillGate,
    Fitted,
    Watermarks,
    apply_eviction,
    chunk_turns,
    fit_window,
    needs_compaction,
    plan_eviction,
    split_history_for_summary,
)
from live_memory.memory.fact_keys import (
    fact_identifiers,
    fact_signature,
    fact_words,
    normalise_fact,
    query_terms,
    word_overlap,
)
from live_memory.memory.ingest import Ingestor, held_bytes_cap
from live_memory.memory.layout import (
    Hints,
    PrefixSizes,
    build_request,
    prefix_chars,
    render_trailing_turn,
    stable_prefix_text,
)
from live_memory.memory.ledger import attribute_facts, parse_fact_lines, render_ledger
from live_memory.memory.model import RETRIEVAL_KIND, FileContext, LedgerFact, Turn
from live_memory.memory.persist import facts_from_state, window_from_state, window_to_state
from live_memory.memory.preload import preload
from live_memory.memory.reread import Reread, RereadOutcome, apply_reread
from live_memory.memory.snapshot_store import SnapshotStore
from live_memory.memory.snapshots import Snapshots
from live_memory.memory.window import Window
from live_memory.memory.window_text import OBSERVATION_MARKERS

__all__ = [
    "OBSERVATION_MARKERS",
    "RETRIEVAL_KIND",
    "CommitOutcome",
    "DistillGate",
    "FileContext",
    "Fitted",
    "Hints",
    "Ingestor",
    "LedgerFact",
    "PrefixSizes",
    "Reread",
    "RereadOutcome",
    "SnapshotStore",
    "Snapshots",
    "Turn",
    "Watermarks",
    "Window",
    "apply_eviction",
    "apply_reread",
    "attribute_facts",
    "build_request",
    "chunk_turns",
    "decide_commit",
    "fact_identifiers",
    "fact_signature",
    "fact_words",
    "facts_from_state",
    "fit_window",
    "held_bytes_cap",
    "needs_compaction",
    "normalise_fact",
    "parse_fact_lines",
    "plan_eviction",
    "prefix_chars",
    "preload",
    "query_terms",
    "render_ledger",
    "render_trailing_turn",
    "split_history_for_summary",
    "stable_prefix_text",
    "window_from_state",
    "window_to_state",
    "word_overlap",
]
