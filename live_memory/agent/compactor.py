"""Runs compaction on a fork's private window: the tiers of `memory.compaction` plus the
summariser calls they need."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from pathlib import Path

from live_memory.agent.recall import store_facts
from live_memory.agent.services import Services
from live_memory.agent.summarizer import render_material, summarize
from live_memory.config import constants as C
from live_memory.errors import ProviderError
from live_memory.memory import (
    DistillGate,
    FileContext,
    Turn,
    Watermarks,
    Window,
    apply_eviction,
    attribute_facts,
    chunk_turns,
    needs_compaction,
    parse_fact_lines,
    plan_eviction,
    split_history_for_summary,
)
from live_memory.providers import Usage
from live_memory.tools import build_directory_tree

__all__ = [
    "CORE_MAP_HEADING",
    "CompactionReport",
    "CoreMap",
    "compact_window",
    "has_core_map",
    "stable_tree",
    "tree_chars",
]

CoreMap = Callable[[int], str]
"""Renders the workspace's core map within a number of characters ("" when there is none)."""

CORE_MAP_HEADING = "## Core map of the code (from the symbol index)"

logger = logging.getLogger(__name__)


class CompactionReport:
    """Usage spent by summariser calls during one compaction (accounted like answers)."""

    def __init__(self) -> None:
        self.usage = Usage()
        self.summaries = 0


def tree_chars(services: Services) -> int:
    """The directory tree's budget. Nominal chars per token, not the workspace's calibrated
    ratio: a budget that drifted between compactions would change the tree, and with it the
    whole stable prefix, though the repository had not changed."""
    return int(services.max_context_tokens * C.DIRECTORY_TREE_SHARE * C.CHARS_PER_TOKEN)


def core_map_chars(services: Services) -> int:
    """The core map's budget, nominal like the tree's (so it does not drift)."""
    share = int(services.max_context_tokens * C.CORE_MAP_SHARE * C.CHARS_PER_TOKEN)
    return min(C.CORE_MAP_MAX_CHARS, share)


def stable_tree(root: Path, services: Services, core_map: CoreMap | None = None) -> str:
    """The stable prefix's workspace part: the directory tree, then the core map. Built only
    when the tree is (first question, HEAD moved, compaction), so the prefix stays stable."""
    vendored = services.settings.include_vendored
    tree = build_directory_tree(root, tree_chars(services), vendored=vendored)
    text = core_map(core_map_chars(services)) if core_map is not None else ""
    return f"{tree}\n\n{CORE_MAP_HEADING}\n{text}" if text else tree


def has_core_map(tree: str) -> bool:
    """Whether a stable tree (as `stable_tree` built it) carries the core map."""
    return f"\n\n{CORE_MAP_HEADING}\n" in tree


async def _fold(
    window: Window,
    services: Services,
    report: CompactionReport,
    files: list[FileContext],
    turns: list[Turn],
    *,
    evicted: dict[str, str] | None = None,
) -> bool:
    """Summarise material into the ledger. False (ledger untouched) when the call fails or
    its answer holds no fact: the caller must then keep the material. `evicted`: the files
    (path to sha256) this compaction forgot before the fold, still the facts' sources."""
    provider = services.require_provider()
    # With the store, the summary need only carry the material's facts: the store merges them
    # (confirming, superseding by subject), so the resident ledger is not sent again with
    # every chunk. It was ~40 % of each summariser prompt, all of it uncached input.
    ledger = [] if services.stores.facts is not None else window.ledger
    try:
        text, usage = await summarize(
            provider,
            services.settings.effective_summary_model,
            ledger,
            render_material(files, turns),
        )
    except ProviderError:
        logger.exception("summariser failed for %s; keeping material", window.root)
        return False
    report.usage += usage
    report.summaries += 1
    known = (evicted or {}) | window.known_hashes() | {f.path: f.sha256 for f in files}
    facts = attribute_facts(parse_fact_lines(text), known)
    if not facts:
        logger.warning("summary for %s held no facts; keeping material", window.root)
        return False
    # With the store, the summary's facts are added and merged there and the ledger becomes
    # the store's resident set: nothing the summary left out is lost. Without it (or when
    # it fails), the ledger is the summary, as it always was.
    if not await store_facts(window, services, facts):
        window.ledger = facts
    window.summaries_written += 1
    return True


async def _fold_history(
    window: Window,
    services: Services,
    report: CompactionReport,
    marks: Watermarks,
    evicted: dict[str, str],
) -> int:
    """Tier 2: fold the oldest Q/A into the ledger in bounded chunks, oldest first, until the
    floor is reached; drop exactly the turns of each chunk folded in. A failed or empty
    summary stops it with the rest of the history kept. Returns the turns dropped."""
    old, _ = split_history_for_summary(window)
    dropped = 0
    chunks = chunk_turns(old)[: C.SUMMARY_MAX_CHUNKS_PER_COMPACTION]
    whole = services.stores.facts is not None
    if whole:
        # With the store the summary need only carry the material's facts, not the whole
        # ledger again: chunks sized to what one summary can restate, so a compaction does
        # not squeeze out what does not fit in one output (more, smaller summariser calls).
        # And all of the old history is folded, not just down to the floor: what one
        # 200k-char chunk did before, so the next compaction is as far off as it was.
        size = int(C.LEDGER_MAX_TOKENS * C.CHARS_PER_TOKEN * C.SUMMARY_STORE_CHUNK_SHARE)
        chunks = chunk_turns(old, size)[: C.SUMMARY_MAX_CHUNKS_WITH_STORE]
    for chunk in chunks:
        if not whole and window.refrozen_tokens() <= marks.floor_tokens:
            break
        if not await _fold(window, services, report, [], chunk, evicted=evicted):
            break
        dropped += window.drop_turns(chunk)
    return dropped


async def compact_window(
    window: Window,
    services: Services,
    *,
    gate: DistillGate | None = None,
    force: bool = False,
    report: CompactionReport | None = None,
    core_map: CoreMap | None = None,
) -> bool:
    """Compact `window` down to the floor if it is over the threshold (or `force`).

    Returns True when a compaction ran. Summariser failures degrade to shedding raw bytes;
    Q/A history is never dropped without being summarised.
    """
    settings = services.settings
    marks = Watermarks(
        services.max_context_tokens, settings.compaction_threshold, settings.compaction_floor
    )
    if force:
        marks = Watermarks(max(window.estimated_tokens(), 1), 0.0, settings.compaction_floor)
    elif not needs_compaction(window, marks):
        return False
    report = report or CompactionReport()
    # The new stable part first, so the eviction plan counts its size (a grown core map must
    # not leave the compacted prompt above the floor).
    window.tree = await asyncio.to_thread(stable_tree, Path(window.root), services, core_map)
    plan = plan_eviction(window, marks)
    if plan.shed:
        # Distil only while the budget allows background spend; otherwise shed raw bytes.
        paused = services.spend.background_paused(window.root)
        if gate is not None and not paused and gate.try_reserve():
            try:
                await _fold(window, services, report, list(plan.shed), [])
            finally:
                gate.release()
    # The files evicted for room are what the history to be folded read and cited: their
    # provenance goes into the fold, or its facts would cite nothing and never go stale.
    known = window.known_hashes()
    evicted = {path: known[path] for path in plan.evict if path in known}
    apply_eviction(window, plan)
    if window.refrozen_tokens() > marks.floor_tokens:
        await _fold_history(window, services, report, marks, evicted)
    # The resident set anew (demoting stored facts whose files moved on): the most used
    # facts, retrieval's hits among them, within their share of the window.
    await store_facts(window, services, (), demote=True)
    window.compactions += 1
    window.last_compaction_at = time.time()
    window.freeze()
    logger.info(
        "compacted %s to ~%d tokens (%d summaries)",
        window.root,
        window.estimated_tokens(),
        report.summaries,
    )
    return True
