"""The knowledge ledger: distilled facts with provenance (design Appendix B)."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import PurePosixPath

from live_memory.memory.fact_keys import fact_signature
from live_memory.memory.model import LedgerFact

__all__ = [
    "LEDGER_HEADING",
    "STALE_LEDGER_HEADING",
    "DuplicateIndex",
    "attribute_facts",
    "demote_facts",
    "is_duplicate_fact",
    "merge_facts",
    "parse_fact_lines",
    "render_ledger",
    "rendered_ledger_chars",
    "revalidate_facts",
]

LEDGER_HEADING = "## Accumulated knowledge (durable facts distilled from earlier questions)"
STALE_LEDGER_HEADING = (
    "## ⚠ Possibly out of date (a file these facts cite has changed since; "
    "re-verify before relying)"
)
_EMPTY_LEDGER = "(empty: nothing distilled yet)"
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_CATEGORY = re.compile(r"^\[(architecture|convention|decision|gotcha|task)\]\s*", re.IGNORECASE)
_WORD = re.compile(r"[a-z0-9_]+")
_DUPLICATE_OVERLAP = 0.7


def parse_fact_lines(text: str) -> list[tuple[str, str]]:
    """Split summariser output into (category, fact) pairs, one fact per non-empty line."""
    facts: list[tuple[str, str]] = []
    for raw in text.splitlines():
        line = _BULLET.sub("", raw).strip()
        if not line or line.startswith("#"):
            continue
        category = "architecture"
        match = _CATEGORY.match(line)
        if match:
            category = match.group(1).lower()
            line = line[match.end() :].strip()
        if line:
            facts.append((category, line))
    return facts


def attribute_facts(
    parsed: Iterable[tuple[str, str]], known_files: Mapping[str, str]
) -> list[LedgerFact]:
    """Attribute each fact to the known files it names (full relative path or basename)."""
    by_basename: dict[str, list[str]] = {}
    for path in known_files:
        by_basename.setdefault(PurePosixPath(path).name, []).append(path)
    facts = []
    for category, text in parsed:
        sources: dict[str, str] = {}
        for path, digest in known_files.items():
            if _names(text, path):
                sources[path] = digest
        for name, paths in by_basename.items():
            if len(name) > 2 and _names(text, name):
                for path in paths:
                    sources.setdefault(path, known_files[path])
        facts.append(LedgerFact(text, tuple(sorted(sources.items())), category))
    return facts


def _names(text: str, path: str) -> bool:
    """`path` occurs in `text` as a whole name (optionally `./`-prefixed), not inside another
    word or a longer path: `app.py` is not named by `webapp.py` or `lib/app.py`."""
    return re.search(rf"(?<![\w/.-])(?:\./)?{re.escape(path)}(?![\w-])", text) is not None


def demote_facts(facts: Sequence[LedgerFact], path: str) -> tuple[list[LedgerFact], int]:
    """Mark every fact citing `path` as possibly out of date; returns (facts, newly demoted)."""
    out, demoted = [], 0
    for fact in facts:
        if not fact.stale and any(src == path for src, _ in fact.sources):
            out.append(replace(fact, stale=True))
            demoted += 1
        else:
            out.append(fact)
    return out, demoted


def revalidate_facts(
    facts: Sequence[LedgerFact], current_hashes: Mapping[str, str | None]
) -> list[LedgerFact]:
    """Demote facts whose cited files changed on disk (cross-session freshness check)."""
    out = []
    for fact in facts:
        changed = any(current_hashes.get(src) != digest for src, digest in fact.sources)
        out.append(replace(fact, stale=True) if changed and not fact.stale else fact)
    return out


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def _same_subject(a: str, b: str) -> bool:
    return a == b or not a or not b


def is_duplicate_fact(candidate: str, existing: Iterable[LedgerFact]) -> bool:
    """True when `candidate` overlaps an existing fact's words by 70% or more and does not
    name other identifiers or paths than it (`fact_signature`; a fact naming none is
    compared by its words alone): facts about different symbols are different facts,
    however alike their wording."""
    words = _words(candidate)
    if not words:
        return True
    signature = fact_signature(candidate)
    for fact in existing:
        other = _words(fact.text)
        if (
            other
            and len(words & other) / min(len(words), len(other)) >= _DUPLICATE_OVERLAP
            and _same_subject(signature, fact_signature(fact.text))
        ):
            return True
    return False


def merge_facts(
    existing: Sequence[LedgerFact], new: Iterable[LedgerFact], max_facts: int | None = None
) -> list[LedgerFact]:
    """Append new facts that do not duplicate an existing (or earlier new) one, while the
    ledger has fewer than `max_facts`; facts past the cap are not added.

    Indexed (see `DuplicateIndex`): 3,000 imported facts used to cost 9 million word-set
    comparisons (about 25 s in the workspace actor); now each is checked against the few
    facts that share one of its rarer words.
    """
    merged = list(existing)
    index = DuplicateIndex(merged)
    for fact in new:
        if max_facts is not None and len(merged) >= max_facts:
            break
        if not index.is_duplicate(fact.text):
            merged.append(fact)
            index.add(fact.text)
    return merged


def _order(word: str) -> tuple[int, str]:
    # Any fixed total order keeps the filter exact; longer words first tends to put rarer
    # words in the prefixes, so the posting lists probed stay short.
    return (-len(word), word)


class _WordSets:
    """Prefix filtering over word sets: the slots that may share >= 70 % of a set's words.

    Two sets are near when they share at least t = ceil(0.7 * m) words, m being the smaller
    word count. Put every word set in one fixed order; the smaller set S can have at most
    m - t words outside the other, so among its first m - t + 1 words (its prefix) one is
    shared. So a stored set no larger than the candidate shares a word of ITS prefix
    (`prefixes`, probed with all candidate words), and a stored set larger than the
    candidate shares a word of the CANDIDATE's prefix (`words`). Exact, never a guess.
    """

    def __init__(self) -> None:
        self.prefixes: dict[str, list[int]] = {}
        self.words: dict[str, list[int]] = {}

    @staticmethod
    def prefix(words: frozenset[str]) -> list[str]:
        needed = math.ceil(_DUPLICATE_OVERLAP * len(words))
        return sorted(words, key=_order)[: len(words) - needed + 1]

    def add(self, slot: int, words: frozenset[str]) -> None:
        for word in self.prefix(words):
            self.prefixes.setdefault(word, []).append(slot)
        for word in words:
            self.words.setdefault(word, []).append(slot)

    def candidates(self, words: frozenset[str]) -> set[int]:
        seen: set[int] = set()
        for word in words:
            seen.update(self.prefixes.get(word, ()))
        for word in self.prefix(words):
            seen.update(self.words.get(word, ()))
        return seen


class DuplicateIndex:
    """`is_duplicate_fact` over many facts without comparing against each.

    A fact naming identifiers or paths can only repeat a fact with the same signature or
    one naming none (`_same_subject`): it is compared with those alone (`by_signature`, and
    prefix filtering over the unsigned facts). Only a fact naming none needs prefix filtering
    over every fact. Facts of one shape about 2,000 different functions share their common
    words ("Function", "parses"), so filtering by words alone compared each with every
    earlier one (2 million comparisons, 3.5 s of CPU in the workspace actor per import).
    """

    def __init__(self, facts: Iterable[LedgerFact]) -> None:
        self.sets: list[frozenset[str]] = []
        self.signatures: list[str] = []
        self.every = _WordSets()
        self.unsigned = _WordSets()
        self.by_signature: dict[str, list[int]] = {}
        self.comparisons = 0
        """Exact word-set comparisons made so far (the cost the index keeps small)."""
        for fact in facts:
            self.add(fact.text)

    def add(self, text: str) -> None:
        words = frozenset(_words(text))
        slot = len(self.sets)
        signature = fact_signature(text)
        self.sets.append(words)
        self.signatures.append(signature)
        self.every.add(slot, words)
        if signature:
            self.by_signature.setdefault(signature, []).append(slot)
        else:
            self.unsigned.add(slot, words)

    def is_duplicate(self, text: str) -> bool:
        words = frozenset(_words(text))
        if not words:
            return True
        signature = fact_signature(text)
        if signature:
            seen = self.unsigned.candidates(words)
            seen.update(self.by_signature.get(signature, ()))
        else:
            seen = self.every.candidates(words)
        self.comparisons += len(seen)
        for slot in seen:
            other = self.sets[slot]
            near = other and len(words & other) / min(len(words), len(other)) >= _DUPLICATE_OVERLAP
            if near and _same_subject(signature, self.signatures[slot]):
                return True
        return False


def render_ledger(facts: Sequence[LedgerFact]) -> str:
    """The ledger as the model reads it: fresh facts, then the demoted ones under a warning."""
    fresh = [f"- {f.text}" for f in facts if not f.stale]
    stale = [f"- {f.text}" for f in facts if f.stale]
    parts = [LEDGER_HEADING, "\n".join(fresh) if fresh else _EMPTY_LEDGER]
    if stale:
        parts += ["", STALE_LEDGER_HEADING, "\n".join(stale)]
    return "\n".join(parts)


def rendered_ledger_chars(facts: Sequence[LedgerFact]) -> int:
    """len(render_ledger(facts)), without building the text."""
    fresh = [len(f.text) + 2 for f in facts if not f.stale]
    stale = [len(f.text) + 2 for f in facts if f.stale]
    chars = len(LEDGER_HEADING) + 1
    chars += sum(fresh) + len(fresh) - 1 if fresh else len(_EMPTY_LEDGER)
    if stale:
        chars += 2 + len(STALE_LEDGER_HEADING) + 1 + sum(stale) + len(stale) - 1
    return chars
