"""The knowledge ledger: distilled facts with provenance (design Appendix B)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import PurePosixPath

from live_memory.memory.model import LedgerFact

__all__ = [
    "LEDGER_HEADING",
    "STALE_LEDGER_HEADING",
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


def is_duplicate_fact(candidate: str, existing: Iterable[LedgerFact]) -> bool:
    """True when `candidate` overlaps an existing fact's words by 70% or more."""
    words = _words(candidate)
    if not words:
        return True
    for fact in existing:
        other = _words(fact.text)
        if other and len(words & other) / min(len(words), len(other)) >= _DUPLICATE_OVERLAP:
            return True
    return False


def merge_facts(existing: Sequence[LedgerFact], new: Iterable[LedgerFact]) -> list[LedgerFact]:
    """Append new facts that do not duplicate an existing one."""
    merged = list(existing)
    for fact in new:
        if not is_duplicate_fact(fact.text, merged):
            merged.append(fact)
    return merged


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
