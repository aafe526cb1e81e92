"""The window's side of the fact store: what compaction keeps resident, what retrieval adds.

The window holds a projection of the store: the frozen block's resident set (the most used
current facts, within RESIDENT_FACTS_SHARE of the window), plus what the per-question
retrieval delta (`agent.retrieval`) appended since the last freeze.

Store calls are SQLite work, so they run in a worker thread (`asyncio.to_thread`, or the
retrieval step's own thread) and never on the event loop; each is one short transaction, and
a search is cut off after RECALL_QUERY_DEADLINE_S. A failing store never fails a question:
compaction falls back to the window's own ledger, retrieval to nothing.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from pathlib import Path

from live_memory.agent.retrieval import RetrievalPart
from live_memory.agent.services import Services
from live_memory.config import constants as C
from live_memory.knowledge import FactStore, KnowledgeError, MergeReport
from live_memory.memory import LedgerFact, Window
from live_memory.tools import current_sha256

__all__ = [
    "FACTS_SOURCE",
    "STALE_MARK",
    "FactRetriever",
    "fact_retrievers",
    "forget_facts",
    "is_possibly_stale",
    "known_facts",
    "resident_chars",
    "resident_facts",
    "store_facts",
    "store_learnt",
]

logger = logging.getLogger(__name__)


def resident_chars(services: Services) -> int:
    """The resident set's budget: its share of the window, at the nominal chars per token
    (as the tree's: a budget that drifted would re-render the frozen block for nothing)."""
    share = services.settings.resident_facts_share
    return int(services.max_context_tokens * share * C.CHARS_PER_TOKEN)


def resident_facts(services: Services, root: str) -> list[LedgerFact] | None:
    """The store's resident set for `root` (blocking; None without a store or on failure)."""
    store = services.stores.facts
    if store is None:
        return None
    try:
        return store.resident(root, resident_chars(services), services.settings.max_ledger_facts)
    except KnowledgeError:
        logger.exception("fact store: resident set of %s unavailable", root)
        return None


UNHELD_DEMOTE_MAX_PATHS = 64  # files hashed per store projection for ledger demotions


def _store_and_project(
    services: Services,
    root: str,
    facts: Sequence[LedgerFact],
    current: dict[str, str | None],
    unheld: Sequence[str],
) -> list[LedgerFact] | None:
    store = services.stores.facts
    if store is None:
        return None
    current |= {path: current_sha256(Path(root), path) for path in unheld}
    try:
        store.merge(root, facts)
        if current:
            store.demote(root, current)
    except KnowledgeError:
        logger.exception("fact store: facts of %s not stored", root)
        return None
    return resident_facts(services, root)


async def store_facts(
    window: Window, services: Services, facts: Sequence[LedgerFact], *, demote: bool = False
) -> bool:
    """Merge `facts` into the store and make the window's ledger the resident set; with
    `demote`, first demote stored facts citing files the window knows at another version.
    False (window untouched) without a store or when it fails: the caller keeps today's
    behaviour, the ledger regenerated from the summary."""
    files = window.files
    current = (
        {p: f.sha256 if f.state == "current" else None for p, f in files.items()} if demote else {}
    )
    # Facts demoted in the ledger for a file the window no longer holds (Window.demote_cited):
    # the store learns it from the file's bytes on disk before the ledger becomes its
    # projection again, or that projection would bring them back as current.
    cited = (src for fact in window.ledger if fact.stale for src, _ in fact.sources)
    unheld = list(dict.fromkeys(p for p in cited if p not in files))[:UNHELD_DEMOTE_MAX_PATHS]
    resident = await asyncio.to_thread(
        _store_and_project, services, window.root, facts, current, unheld
    )
    if resident is None:
        return False
    window.ledger = resident
    return True


FACTS_HEADING = "Facts from long-term memory"
"""Short: it is repeated in every retrieval delta; how to read the facts (current unless
marked "(possibly out of date)") is said once, in the system prompt."""
STALE_MARK = "(possibly out of date) "
FACTS_SOURCE = "facts"


def is_possibly_stale(fact: LedgerFact, window: Window) -> bool:
    """Demoted in the store, or a cited file the window knows is no longer at the version
    the fact was learnt from (changed, stale or deleted)."""
    if fact.stale:
        return True
    for path, digest in fact.sources:
        ctx = window.files.get(path)
        if ctx is not None and (ctx.state != "current" or ctx.sha256 != digest):
            return True
    return False


class FactRetriever:
    """The fact store as a retriever of the per-question delta (`agent.retrieval`): the
    store's best matches for the question's identifiers and words, less those the prompt
    already holds, each marked by freshness as `window` (the fork's) sees it. Runs in the
    retrieval worker thread; the search itself is bounded by RECALL_QUERY_DEADLINE_S."""

    def __init__(self, store: FactStore, window: Window, limit: int = C.RECALL_MAX_FACTS) -> None:
        self.store, self.window, self.limit = store, window, limit

    def retrieve(self, question: str, seen: Callable[[str], bool]) -> RetrievalPart:
        window = self.window
        try:
            found = self.store.search(window.root, question, limit=self.limit)
        except KnowledgeError:
            logger.exception("fact store: no retrieval for %s", window.root)
            return RetrievalPart(FACTS_HEADING, (), source=FACTS_SOURCE)
        lines: list[str] = []
        stale = 0
        for hit in found.facts:
            if seen(hit.fact.text):
                continue
            old = is_possibly_stale(hit.fact, window)
            stale += old
            lines.append(f"- {STALE_MARK if old else ''}{hit.fact.text}")
        return RetrievalPart(
            FACTS_HEADING,
            tuple(lines),
            matched=found.matched,
            stale=stale,
            source=FACTS_SOURCE,
        )


def store_learnt(
    services: Services, root: str, facts: list[LedgerFact], *, chunk: int | None = None
) -> MergeReport | None:
    """Learnt facts (imports, transcripts, a restored snapshot's ledger) into the durable
    store (blocking, one short transaction): the window's ledger is bounded, the store is
    where they are kept and retrieved from. Merging is idempotent (a stored fact is
    confirmed, not counted again), so a snapshot written before the store existed is
    migrated and a later one only re-confirms. None without a store or when it fails.
    With `chunk`, in transactions of that many facts (`FactStore.merge_in_chunks`)."""
    store = services.stores.facts
    if store is None or not facts:
        return None
    try:
        return (
            store.merge(root, facts) if chunk is None else store.merge_in_chunks(root, facts, chunk)
        )
    except KnowledgeError:
        logger.exception("fact store: learnt facts of %s not stored", root)
        return None


def forget_facts(services: Services, root: str, ids: Sequence[int]) -> int:
    """Delete stored facts by id (an import a wipe overtook); 0 without a store or on failure."""
    store = services.stores.facts
    if store is None or not ids:
        return 0
    try:
        return store.forget(root, ids)
    except KnowledgeError:
        logger.exception("fact store: facts of %s not forgotten", root)
        return 0


def known_facts(services: Services, root: str, ledger: Sequence[LedgerFact]) -> list[LedgerFact]:
    """Every current fact of the workspace: the store's, or `ledger` without one (or when
    the store cannot be read)."""
    store = services.stores.facts
    if store is not None:
        try:
            return store.current(root)
        except KnowledgeError:
            logger.exception("fact store: facts of %s unreadable; using the ledger", root)
    return list(ledger)


def fact_retrievers(services: Services, window: Window) -> tuple[FactRetriever, ...]:
    """The retrievers a question gets from the fact store (none without one)."""
    store = services.stores.facts
    return () if store is None else (FactRetriever(store, window),)
