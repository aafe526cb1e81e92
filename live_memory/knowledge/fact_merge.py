"""The fact store's rules as pure functions: how a new fact lands (new, a confirmation of one
already known, or the successor of one it supersedes) and which facts garbage collection
removes first. `FactStore` applies them to SQLite rows; tests apply them to plain lists.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final, Literal

from live_memory.memory import (
    LedgerFact,
    fact_signature,
    fact_words,
    normalise_fact,
    word_overlap,
)

__all__ = [
    "SUPERSEDE_OVERLAP",
    "Decision",
    "FactRow",
    "GcPolicy",
    "decide",
    "eviction_key",
    "gc_victims",
]

SUPERSEDE_OVERLAP: Final = 0.7
"""Two facts with the same signature sharing this share of words are about the same subject:
the newer supersedes the older (the same threshold the ledger's duplicate test used)."""

Decision = Literal["new", "confirm", "supersede"]


@dataclass(frozen=True, slots=True)
class FactRow:
    """One stored fact with its bookkeeping (times are UNIX seconds)."""

    id: int
    fact: LedgerFact
    first_confirmed: float
    last_confirmed: float
    uses: int = 0
    superseded_by: int | None = None
    superseded_at: float | None = None
    demoted_at: float | None = None
    norm: str = ""
    """`normalise_fact(fact.text)`; computed when not given (the store reads it stored)."""
    signature: str = ""
    """`fact_signature(fact.text)`; computed when not given."""

    def __post_init__(self) -> None:
        if not self.norm:
            object.__setattr__(self, "norm", normalise_fact(self.fact.text))
        if not self.signature:
            object.__setattr__(self, "signature", fact_signature(self.fact.text))

    @property
    def current(self) -> bool:
        return self.superseded_by is None


def decide(
    fact: LedgerFact, candidates: Iterable[FactRow], *, key: tuple[str, str] | None = None
) -> tuple[Decision, FactRow | None]:
    """How `fact` lands among the current `candidates` (superseded ones are ignored):

    - "confirm" the one with the same normalised text;
    - else "supersede" the newest with the same signature (identifiers and paths named)
      and at least SUPERSEDE_OVERLAP of its words: a newer statement of the same subject;
    - else "new". Facts naming different identifiers or paths are never merged.

    `key`: the fact's (normalised text, signature) when the caller has them already.
    """
    norm, signature = key or (normalise_fact(fact.text), fact_signature(fact.text))
    words = fact_words(norm)
    older: FactRow | None = None
    for row in candidates:
        if not row.current:
            continue
        if row.norm == norm:
            return "confirm", row
        if row.signature != signature:
            continue
        if word_overlap(words, fact_words(row.norm)) >= SUPERSEDE_OVERLAP and (
            older is None or row.id > older.id
        ):
            older = row
    return ("supersede", older) if older is not None else ("new", None)


@dataclass(frozen=True, slots=True)
class GcPolicy:
    max_facts: int
    """Facts one workspace keeps (superseded and demoted ones included)."""
    retire_after_s: float
    """Superseded or demoted facts older than this are removed even under the cap."""


def eviction_key(row: FactRow) -> tuple[int, float, float, int]:
    """Order of removal past the cap: superseded facts (longest superseded first), then
    demoted ones (longest demoted first), then current ones (fewest uses, longest since
    last confirmed, oldest)."""
    if row.superseded_by is not None:
        return (0, row.superseded_at or 0.0, 0.0, row.id)
    if row.demoted_at is not None:
        return (1, row.demoted_at, 0.0, row.id)
    return (2, float(row.uses), row.last_confirmed, row.id)


def gc_victims(rows: Sequence[FactRow], policy: GcPolicy, now: float) -> list[int]:
    """Ids garbage collection removes from one workspace's `rows`: the retired (superseded
    or demoted longer than the policy allows), then, while more than `max_facts` remain,
    the first in `eviction_key` order."""
    horizon = now - policy.retire_after_s
    victims = [
        r.id
        for r in rows
        if (r.superseded_at is not None and r.superseded_at < horizon)
        or (r.demoted_at is not None and r.demoted_at < horizon)
    ]
    gone = set(victims)
    left = sorted((r for r in rows if r.id not in gone), key=eviction_key)
    excess = len(left) - policy.max_facts
    if excess > 0:
        victims += [r.id for r in left[:excess]]
    return victims
