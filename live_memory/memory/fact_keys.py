"""What makes two facts the same fact: normalised text, the identifiers and paths a fact names,
and the words a question is searched by.

Word overlap alone cannot tell facts apart that share a shape: "Function handle_record_0042 in
src/mod_0042/handler.py parses RecordType0042 records" and the same sentence for 0043 share
70 % of their words, so the old duplicate test kept 296 of 2,000 such facts. A fact's
*signature* (the set of identifiers and paths it names) separates them: facts with different
signatures are never merged, whatever their words.

Every key is taken from user text (questions, imported facts, summaries) on a thread that holds
the interpreter lock, so each pass here is linear: a regex never rescans a run it already
failed on (a call's name must start where a word does; letters-with-digits is a check over
each run of letters and digits, where the old pattern backtracked over the whole run from each
of its characters). Tokens longer than MAX_IDENTIFIER_CHARS are no name, only the first
MAX_KEY_SCAN_CHARS of a text are scanned, and a text yields at most MAX_TEXT_IDENTIFIERS
names. Before, one 20 KB token cost 7.6 s of CPU and a 100 KB one minutes.
"""

from __future__ import annotations

import re
from typing import Final

from live_memory.config import constants as C

__all__ = [
    "fact_identifiers",
    "fact_signature",
    "fact_words",
    "normalise_fact",
    "query_terms",
    "word_overlap",
]

_SPACE: Final = re.compile(r"\s+")
MAX_TEXT_IDENTIFIERS: Final = 64  # identifiers one text yields at most
_TOKEN: Final = re.compile(rf"`([^`\n]{{1,{C.MAX_IDENTIFIER_CHARS}}})`|([A-Za-z0-9_][\w./:-]*)")
# The name must start where a word does: from every character of a long run, `\w*\(` scanned
# the rest of the run again. Bounded, so a longer name is no call.
_CALL: Final = re.compile(rf"(?<!\w)([A-Za-z_]\w{{0,{C.MAX_IDENTIFIER_CHARS - 1}}})\(")
_WORD: Final = re.compile(r"[a-z0-9_]+")
# snake_case, dotted or slashed names, C++/Rust paths, camelCase / CamelCase; letters with
# digits (three characters or more: "v2" is a word, "utf8" a name) are `_mixes_letters_and_digits`.
_SHAPE: Final = re.compile(r"[_/.]|::|[a-z0-9][A-Z]|[A-Z]{2}[a-z]")
_ALNUM_RUN: Final = re.compile(r"[^\W_]{3,}")
_ALPHA: Final = re.compile(r"[A-Za-z]")
_DIGIT: Final = re.compile(r"\d")
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


def _mixes_letters_and_digits(token: str) -> bool:
    return any(
        _ALPHA.search(run) is not None and _DIGIT.search(run) is not None
        for run in _ALNUM_RUN.findall(token)
    )


def _is_identifier(token: str) -> bool:
    return (
        len(token) <= C.MAX_IDENTIFIER_CHARS
        and _ALPHA.search(token) is not None
        and (_SHAPE.search(token) is not None or _mixes_letters_and_digits(token))
        and token.lower() not in _NOT_IDENTIFIERS
    )


def _scanned(text: str) -> str:
    """`text` up to MAX_KEY_SCAN_CHARS, less a token the cap cut in two."""
    if len(text) <= C.MAX_KEY_SCAN_CHARS:
        return text
    head = text[: C.MAX_KEY_SCAN_CHARS]
    if text[C.MAX_KEY_SCAN_CHARS].isspace():
        return head
    kept = head.rsplit(maxsplit=1)
    return kept[0] if len(kept) == 2 else ""


def fact_identifiers(text: str) -> list[str]:
    """The code identifiers and paths `text` names, in order of appearance, without repeats:
    back-quoted text, names followed by `(`, and tokens shaped like code (snake_case,
    CamelCase, dotted or slashed names, names with digits). Case is kept: `Config` and
    `config` are different names in most languages. At most MAX_TEXT_IDENTIFIERS, from
    the first MAX_KEY_SCAN_CHARS of `text`."""
    text = _scanned(text)
    found: dict[str, None] = {}
    for match in _TOKEN.finditer(text):
        quoted, token = match.group(1), match.group(2)
        name = quoted.strip() if quoted is not None else token.rstrip(_TRAILING)
        if name and (quoted is not None or _is_identifier(name)):
            found.setdefault(name, None)
            if len(found) >= MAX_TEXT_IDENTIFIERS:
                return list(found)
    for match in _CALL.finditer(text):
        found.setdefault(match.group(1), None)
        if len(found) >= MAX_TEXT_IDENTIFIERS:
            break
    return list(found)


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
    for match in _WORD.finditer(_scanned(question).lower()):
        if len(terms) >= max_terms:
            break
        word = match.group()
        if 3 <= len(word) <= C.MAX_IDENTIFIER_CHARS and word not in _STOPWORDS:
            terms.setdefault(word, None)
    return list(terms)[:max_terms]
