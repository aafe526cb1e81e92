"""The per-question symbol lookup: the question's identifiers looked up in the index.

The index's part of the retrieval delta (live_memory.agent.retrieval wraps it): for
"where is parse_config defined?" it returns `path:line [kind] name: signature` lines for
`parse_config`, so the first prompt already holds the answer. Identifier-looking words
(backticked, snake_case, CamelCase, dotted, with digits) are tried first, then the other
words that are not common English.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from live_memory.config import constants as C
from live_memory.index.core_map import symbol_line
from live_memory.index.workspace_index import WorkspaceIndex

__all__ = ["SymbolHits", "lookup_symbols", "question_names"]

_BACKTICKED = re.compile(r"`([^`\s]{1,200})`")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)*")
_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "class",
        "code",
        "could",
        "define",
        "defined",
        "defines",
        "definition",
        "did",
        "do",
        "does",
        "file",
        "files",
        "find",
        "for",
        "from",
        "function",
        "functions",
        "get",
        "has",
        "have",
        "how",
        "i",
        "in",
        "is",
        "it",
        "its",
        "kind",
        "line",
        "lines",
        "list",
        "located",
        "lives",
        "me",
        "method",
        "methods",
        "module",
        "name",
        "named",
        "of",
        "on",
        "or",
        "please",
        "show",
        "so",
        "tell",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "this",
        "those",
        "to",
        "type",
        "used",
        "uses",
        "using",
        "variable",
        "was",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "work",
        "works",
        "you",
        "your",
    ]
)


def _identifier_like(word: str) -> bool:
    return (
        "_" in word
        or "." in word
        or "::" in word
        or any(c.isdigit() for c in word)
        or any(c.isupper() for c in word[1:])
    )


def question_names(question: str) -> list[str]:
    """Candidate symbol names of `question`, most specific first, at most MAX_NAMES; from
    its first MAX_KEY_SCAN_CHARS, none longer than MAX_IDENTIFIER_CHARS."""
    strong: dict[str, None] = {}
    weak: dict[str, None] = {}
    for match in _BACKTICKED.finditer(question, 0, C.MAX_KEY_SCAN_CHARS):
        for word in _WORD.findall(match.group(1).rstrip("()")):
            strong.setdefault(word, None)
    for found in _WORD.findall(question, 0, C.MAX_KEY_SCAN_CHARS):
        word = found.strip(".")
        if not 3 <= len(word) <= C.MAX_IDENTIFIER_CHARS or word.lower() in _STOPWORDS:
            continue
        (strong if _identifier_like(word) else weak).setdefault(word, None)
    names = list(strong) + [w for w in weak if w not in strong]
    return names[: C.SYMBOL_LOOKUP_MAX_NAMES]


@dataclass(frozen=True, slots=True)
class SymbolHits:
    lines: tuple[str, ...]
    """Definitions not yet in the prompt, as `path:line [kind] name: signature — doc`."""
    matched: int
    """Definitions found, those already in the prompt included."""

    @property
    def found(self) -> bool:
        """Some name of the question is defined in the index (even if already in the prompt)."""
        return self.matched > 0


def lookup_symbols(index: WorkspaceIndex, question: str, seen: Callable[[str], bool]) -> SymbolHits:
    lines: list[str] = []
    matched = 0
    for name in question_names(question):
        for row in index.find(name, limit=C.SYMBOL_LOOKUP_PER_NAME):
            matched += 1
            if seen(f"{row.location} "):  # already in the prompt (core map, earlier delta)
                continue
            lines.append(symbol_line(row))
            if len(lines) >= C.SYMBOL_LOOKUP_MAX_HITS:
                return SymbolHits(tuple(lines), matched)
    return SymbolHits(tuple(lines), matched)
