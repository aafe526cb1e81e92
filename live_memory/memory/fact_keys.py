"""What makes two facts the same fact: normalised text, the identifiers and paths a fact names,
and the words a question is searched by.

Word overlap alone cannot tell facts apart that share a shape: "Function handle_record_0042 in
src/mod_0042/handler.py parses RecordType0042 records" and the same sentence for 0043 share
70 % of their words, so the old duplicate test kept 296 of 2,000 such facts. A fact's
*signature* (the set of identifiers and paths it names) separates them: facts with different
signatures are never merged, whatever their words.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = [
    "fact_identifiers",
    "fact_signature",
    "fact_words",
    "normalise_fact",
    "query_terms",
    "word_overlap",
]

_SPACE: Final = re.compile(r"\s+")
_TOKEN: Final = re.compile(r"`([^`\n]{1,200})`|([A-Za-z0-9_][\w./:-]*)")
_CALL: Final = re.compile(r"([A-Za-z_]\w*)\(")
_WORD: Final = re.compile(r"[a-z0-9_]+")
# snake_case, dotted or slashed names, C++/Rust paths, camelCase / CamelCase, letters with
# digits (three characters or more: "v2" is a word, "utf8" a name).
_SHAPE: Final = re.compile(
    r"[_/.]|::|[a-z0-9][A-Z]|[A-Z]{2}[a-z]|(?=\w{3})(?:[A-Za-z]\w*\d|\d\w*[A-Za-z])"
)
_ALPHA: Final = re.compile(r"[A-Za-z]")
_TRAILING: Final = ".,:;-/"
_NOT_IDENTIFIERS: Final = frozenset({"e.g", "i.e", "etc", "vs", "a.k.a"})
_STOPWORDS: Final = frozenset(
    re.findall(
        r"\w+",
        "a an and are as at be by can do does for from has have how i in is it its of on or "
        "the that this to was what when where which who why will with you your me my we our "
        "there their them they then than into about any all some does did done should would "
        "could tell explain show give find defined define live lives located function method "
        "class file files code repository repo please",
    )
)
MAX_QUERY_TERMS: Final = 32


def normalise_fact(text: str) -> str:
    """The fact as compared for exact duplicates: case, spacing and the final full stop
    do not make a different fact."""
    return _SPACE.sub(" ", text).strip().rstrip(".").strip().lower()


def _is_identifier(token: str) -> bool:
    return (
        _SHAPE.search(token) is not None
        and _ALPHA.search(token) is not None
        and token.lower() not in _NOT_IDENTIFIERS
    )


def fact_identifiers(text: str) -> list[str]:
    """The code identifiers and paths `text` names, in order of appearance, without repeats:
    back-quoted text, names followed by `(`, and tokens shaped like code (snake_case,
    CamelCase, dotted or slashed names, names with digits). Case is kept: `Config` and
    `config` are different names in most languages."""
    found: dict[str, None] = {}
    for match in _TOKEN.finditer(text):
        quoted, token = match.group(1), match.group(2)
        if quoted is not None:
            found.setdefault(quoted.strip(), None)
            continue
        token = token.rstrip(_TRAILING)
        if token and _is_identifier(token):
            found.setdefault(token, None)
    for match in _CALL.finditer(text):
        found.setdefault(match.group(1), None)
    return [name for name in found if name]


def fact_signature(text: str) -> str:
    """The identifiers and paths a fact names, lower-cased (as `normalise_fact` folds the
    text), sorted and joined: facts with different signatures are different facts (never
    merged, never superseded by one another)."""
    return " ".join(sorted({name.lower() for name in fact_identifiers(text)}))


def fact_words(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(text.lower()))


def word_overlap(a: frozenset[str], b: frozenset[str]) -> float:
    """Shared words over the larger set (0 when either is empty): a restatement says about
    as much as the fact it replaces; a short fact inside a longer one is not its update."""
    if not a or not b:
        return 0.0
    return len(a & b) / max(len(a), len(b))


def query_terms(question: str, max_terms: int = MAX_QUERY_TERMS) -> list[str]:
    """The terms a question is searched by: its identifiers first (they are what names a
    fact), then its other words of three letters or more that are not filler, lower-cased
    (the search's tokenizer folds case), without repeats, at most `max_terms`."""
    terms: dict[str, None] = {}
    for name in fact_identifiers(question):
        for part in _WORD.findall(name.lower()):
            if part not in _STOPWORDS and len(part) >= 2:
                terms.setdefault(part, None)
    for word in _WORD.findall(question.lower()):
        if len(word) >= 3 and word not in _STOPWORDS:
            terms.setdefault(word, None)
    return list(terms)[:max_terms]
