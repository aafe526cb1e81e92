"""The per-question retrieval delta: what the stores know about this question, appended once.

Before a question's first model call, every retriever of the workspace (the symbol index, the
fact store) is asked for the lines it holds about the question. The lines not already in the
prompt are appended to the window's history as ONE observation turn (no ack: a small model
copies an assistant "Noted." as its answer) ahead of the question: append-only, so every
earlier byte of the prompt stays a cached prefix, and what was retrieved stays in the window
for later questions.

A retriever is any object with `retrieve(question, seen)`; `seen(line)` says whether a line is
already in the prompt (so nothing is sent twice). Retrievers run in a worker thread and must
bound their own work; one that fails is logged and skipped.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from live_memory.config import constants as C
from live_memory.hygiene import redact_secrets
from live_memory.index import WorkspaceIndex, lookup_symbols
from live_memory.memory import RETRIEVAL_KIND, Turn, Window

__all__ = [
    "Retrieval",
    "RetrievalPart",
    "Retriever",
    "SymbolRetriever",
    "append_retrieval",
    "retrieve_all",
]

logger = logging.getLogger(__name__)

RETRIEVAL_HEADING = "[retrieved for the next question]"
"""Short: every retrieval delta repeats it, uncached on the request that first carries it (the
system prompt says once what the message is)."""


@dataclass(frozen=True, slots=True)
class RetrievalPart:
    """One retriever's contribution: a heading and its lines, best first."""

    heading: str
    lines: tuple[str, ...]
    grounds: bool = False
    """The lines answer where the question's subject lives (definitions with path:line):
    the cold guard counts such a part as grounding."""
    matched: int = 0
    """Entries the retriever matched, those already in the prompt included (hit rate)."""
    stale: int = 0
    """Of `lines`, how many are marked possibly out of date."""
    source: str = ""
    """Which store answered ("facts", "symbols"): how /stats tells the parts apart."""


class Retriever(Protocol):
    def retrieve(self, question: str, seen: Callable[[str], bool]) -> RetrievalPart | None: ...


class SymbolRetriever:
    """The structural index's part: definitions of the identifiers the question names."""

    heading = "Symbol definitions (path:line [kind] name: signature — doc)"

    def __init__(self, index: WorkspaceIndex) -> None:
        self._index = index

    def retrieve(self, question: str, seen: Callable[[str], bool]) -> RetrievalPart | None:
        hits = lookup_symbols(self._index, question, seen)
        if not hits.found:
            return None
        return RetrievalPart(
            self.heading, hits.lines, grounds=True, matched=hits.matched, source="symbols"
        )


@dataclass(frozen=True, slots=True)
class Retrieval:
    """What was appended for one question."""

    parts: tuple[RetrievalPart, ...] = ()
    asked: tuple[RetrievalPart, ...] = ()
    """Every part a retriever returned, before the cap and with no lines dropped: the
    figures /stats counts (a retriever whose matches were all in the prompt is a hit too)."""

    @property
    def lines(self) -> int:
        return sum(len(p.lines) for p in self.parts)

    @property
    def grounds(self) -> bool:
        """A grounding part answered (its lines may already have been in the prompt)."""
        return any(p.grounds for p in self.asked)


def _seen_in(window: Window) -> Callable[[str], bool]:
    texts = [window.tree, window.frozen or "", *(t.text for t in window.history)]
    return lambda line: any(line in text for text in texts)


def retrieve_all(retrievers: Sequence[Retriever], question: str, window: Window) -> Retrieval:
    """Ask every retriever (in order); the parts with lines, within the delta's char cap."""
    seen = _seen_in(window)
    parts: list[RetrievalPart] = []
    asked: list[RetrievalPart] = []
    room = C.RETRIEVAL_DELTA_MAX_CHARS
    for retriever in retrievers:
        try:
            part = retriever.retrieve(question, seen)
        except Exception:  # a store failing must not fail the question
            logger.exception("retriever %s failed", type(retriever).__name__)
            continue
        if part is None:
            continue
        asked.append(part)
        kept: list[str] = []
        for line in part.lines:
            if len(line) + 1 > room:
                break
            kept.append(line)
            room -= len(line) + 1
        if kept:
            parts.append(replace(part, lines=tuple(kept)))
    return Retrieval(tuple(parts), tuple(asked))


def render_retrieval(retrieval: Retrieval) -> str:
    blocks = [f"## {part.heading}\n" + "\n".join(part.lines) for part in retrieval.parts]
    return RETRIEVAL_HEADING + "\n" + "\n\n".join(blocks)


def append_retrieval(window: Window, retrieval: Retrieval) -> bool:
    """Append `retrieval` as one observation turn (no ack); False when it is empty."""
    if not retrieval.parts:
        return False
    text = redact_secrets(render_retrieval(retrieval))[0]
    window.history.append(Turn("user", RETRIEVAL_KIND, text))
    return True
