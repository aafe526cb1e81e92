"""The plain, immutable records a window is made of."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

__all__ = [
    "QA_KINDS",
    "RETRIEVAL_KIND",
    "FileContext",
    "FileSource",
    "FileState",
    "LedgerFact",
    "Turn",
    "TurnKind",
]

FileState = Literal["current", "stale", "deleted"]
FileSource = Literal["read", "observed", "preloaded"]
TurnKind = Literal["question", "answer", "observation", "ack", "retrieval"]

# The turns that are conversation (persisted, counted, summarised); the rest is bookkeeping.
QA_KINDS: Final[tuple[TurnKind, ...]] = ("question", "answer")
# A retrieval delta (agent/retrieval.py): what the stores knew for the question after it. Not
# a delta of the frozen block, so a re-freeze keeps it (dropping it broke the cached prefix at
# the first one and lost what was retrieved); it goes with its question at compaction.
RETRIEVAL_KIND: Final[TurnKind] = "retrieval"


@dataclass(frozen=True, slots=True)
class Turn:
    """One message of the append-only history."""

    role: Literal["user", "assistant"]
    kind: TurnKind
    text: str


@dataclass(frozen=True, slots=True)
class FileContext:
    """What the window knows about one workspace file.

    `content` holds raw text only for observed or preloaded files; it is never persisted.
    """

    path: str
    sha256: str
    size: int
    source: FileSource
    state: FileState = "current"
    content: str | None = None
    last_used: int = 0
    """Logical clock of the last use, for LRU eviction."""


@dataclass(frozen=True, slots=True)
class LedgerFact:
    """One distilled fact, attributed to the files it names."""

    text: str
    sources: tuple[tuple[str, str], ...] = ()
    """(workspace-relative path, sha256 at distillation time) pairs."""
    category: str = "architecture"
    stale: bool = False
