"""The core map: the repository's top-level structure and its most-referenced definitions.

Rendered into the stable prompt prefix after the directory tree (only when the tree is rebuilt,
so the prefix stays byte-stable between questions). Ranking follows aider's repo map in its
simplest form: a definition whose name many files reference is central. Deterministic: the same
index gives the same text.

Every symbol line, here and in lookups and find_symbol, is `path:line [kind] qualified: signature`,
so "where is X defined?" is answered by the line itself.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from live_memory.config import constants as C
from live_memory.hygiene import redact_secrets
from live_memory.index.store import SymbolRow, SymbolStore

__all__ = ["render_core_map", "symbol_line"]

_KIND_WEIGHT = {"class": 3, "interface": 3, "trait": 3, "struct": 3, "enum": 2, "type": 2}


def symbol_line(row: SymbolRow, *, doc: bool = True) -> str:
    line = f"{row.location} [{row.kind}] {row.qualified}: {row.signature}"
    if doc and row.doc:
        line += f"  — {row.doc}"
    return line


def render_core_map(store: SymbolStore, max_chars: int) -> str:
    """The core map within `max_chars` ("" when the index holds nothing)."""
    if max_chars <= 0:
        return ""
    ranked = store.most_referenced(C.CORE_MAP_CANDIDATES)
    if not ranked:
        # Nothing is referenced from another file (a small or new repository): its
        # definitions themselves are the map, so even a tiny workspace starts grounded.
        ranked = [(row, 0) for row in store.definitions(C.CORE_MAP_CANDIDATES)]
    if not ranked:  # no definitions at all (docs only): the directory tree says it all
        return ""
    structure = _structure(store)
    ranked.sort(
        key=lambda item: (-item[1], -_KIND_WEIGHT.get(item[0].kind, 1), item[0].path, item[0].line)
    )
    head = "Top level: " + "; ".join(structure) if structure else ""
    room = max_chars - len(head) - 80
    chosen: list[SymbolRow] = []
    seen: set[tuple[str, int]] = set()
    for row, _files in ranked:
        key = (row.path, row.line)
        if key in seen:
            continue
        cost = len(symbol_line(row, doc=False)) + 1
        if cost > room:
            break
        seen.add(key)
        chosen.append(row)
        room -= cost
    chosen.sort(key=lambda r: (r.path, r.line))
    lines = [head] if head else []
    if chosen:
        lines.append("Definitions (path:line [kind] name: signature):")
        lines += [symbol_line(row, doc=False) for row in chosen]
    return redact_secrets("\n".join(lines))[0][:max_chars]


def _structure(store: SymbolStore) -> list[str]:
    """Per top-level directory: its indexed source files by language."""
    by_top: dict[str, Counter[str]] = defaultdict(Counter)
    for path, language in store.languages_by_path():
        top = path.split("/", 1)[0] + "/" if "/" in path else "."
        by_top[top][language] += 1
    parts = []
    for top in sorted(by_top, key=lambda t: (-sum(by_top[t].values()), t))[:24]:
        counts = by_top[top]
        langs = ", ".join(f"{lang} {n}" for lang, n in sorted(counts.items(), key=lambda x: -x[1]))
        parts.append(f"{top} ({langs})")
    return parts
