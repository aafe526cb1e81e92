"""Secret files and secret-looking text: what must never reach the model verbatim.

Two layers. `is_secret_path` keeps whole files (`.env`, keys, credential stores) out of every
tool. `redact_secrets` masks tokens that slipped into ordinary files (an API key pasted into a
config, a private key in a fixture). Redaction keeps the line count, so `cat -n` style line
numbers and Grep hits still point at the right lines.
"""

from __future__ import annotations

import fnmatch
import functools
import logging
import re
from collections.abc import Callable, Sequence

from live_memory.config.constants import (
    SECRET_BARE_VALUE_MIN_CHARS,
    SECRET_REDACTION,
    SECRET_VALUE_MIN_CHARS,
)

__all__ = ["is_secret_path", "redact_secrets"]

logger = logging.getLogger(__name__)


def is_secret_path(rel_path: str, patterns: Sequence[str]) -> bool:
    """True when `rel_path` (workspace-relative) matches a secret pattern.

    Each pattern is tried on the basename and on the whole path, case-insensitively: a file
    named `.ENV` or `Server.KEY` is as secret as its lower-case twin.
    """
    if not patterns:
        return False
    path = rel_path.replace("\\", "/").strip("/").lower()
    matcher = _matcher(tuple(patterns))
    return matcher.matches(path.rpartition("/")[2]) or matcher.matches(path)


class _Matcher:
    """fnmatch for a fixed pattern set, with plain string tests for the common shapes.

    Listing tools test every file of a large workspace; `*.pem`, `id_rsa*` and `.netrc` are
    endswith / startswith / equality checks, far cheaper than a regex per pattern.
    """

    __slots__ = ("exact", "prefixes", "regex", "suffixes")

    def __init__(self, patterns: tuple[str, ...]) -> None:
        exact: set[str] = set()
        prefixes: list[str] = []
        suffixes: list[str] = []
        complex_patterns: list[str] = []
        for pattern in (p.lower() for p in patterns):
            if not _has_wildcard(pattern):
                exact.add(pattern)
            elif pattern.endswith("*") and not _has_wildcard(pattern[:-1]):
                prefixes.append(pattern[:-1])
            elif pattern.startswith("*") and not _has_wildcard(pattern[1:]):
                suffixes.append(pattern[1:])
            else:
                complex_patterns.append(fnmatch.translate(pattern))
        self.exact = frozenset(exact)
        self.prefixes = tuple(prefixes)
        self.suffixes = tuple(suffixes)
        self.regex = re.compile("|".join(complex_patterns)) if complex_patterns else None

    def matches(self, text: str) -> bool:
        return (
            text in self.exact
            or text.startswith(self.prefixes)
            or text.endswith(self.suffixes)
            or (self.regex is not None and self.regex.match(text) is not None)
        )


def _has_wildcard(pattern: str) -> bool:
    return any(char in pattern for char in "*?[")


@functools.lru_cache(maxsize=32)
def _matcher(patterns: tuple[str, ...]) -> _Matcher:
    return _Matcher(patterns)


# --- tokens with a recognisable shape -----------------------------------------------------
# Each entry: a cheap literal hint (skip the regex when absent) and the token pattern.
_TOKENS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("A", re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b")),
    # OpenAI / Anthropic style; the digit look-ahead spares prose like `sk-learn-compatible-…`.
    ("sk-", re.compile(r"\bsk-(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{20,}")),
    ("gh", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,}\b")),
    ("github_pat_", re.compile(r"\bgithub_pat_[A-Za-z0-9_]{22,}\b")),
    ("glpat-", re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}\b")),
    ("xox", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b")),
    ("_live_", re.compile(r"\b[sr]k_live_[A-Za-z0-9]{16,}\b")),
    ("AIza", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("eyJ", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    # A PEM private key escaped onto one line, as in service-account JSON.
    (
        "PRIVATE KEY",
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[^\n]*?-----END [A-Z0-9 ]*PRIVATE KEY-----"
        ),
    ),
)

# Password in a URL (`scheme://user:password@host`); the user name is kept.
_URL_PASSWORD = re.compile(
    r"(?P<keep>\b[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@'\"]+:)(?P<value>[^/\s@'\"]+)(?=@)"
)

# --- secret-looking assignments -----------------------------------------------------------
# The key must END with one of these words, so `tokenizer`, `api_key_env` or `token_url` are
# not keys; an optional type annotation (`token: str = "…"`) is allowed.
_KEY_WORDS = (
    r"(?:password|passwd|passphrase|secret|token|credentials?|api[_-]?key|apikey"
    r"|access[_-]?key|secret[_-]?key|private[_-]?key|signing[_-]?key|encryption[_-]?key"
    r"|auth[_-]?key|client[_-]?secret)"
)
_OPERATOR = r"[\"']?[ \t]*(?::[ \t]*[A-Za-z_][\w.\[\]|, ]*?[ \t]*)?(?::=|=>|==?|:)[ \t]*"
_QUOTED_ASSIGNMENT = re.compile(
    rf"(?P<keep>{_KEY_WORDS}{_OPERATOR}(?P<quote>[\"'`]))(?P<value>[^\"'`\s]+)(?P=quote)",
    re.IGNORECASE,
)
_BARE_ASSIGNMENT = re.compile(
    rf"(?P<keep>{_KEY_WORDS}[ \t]*[:=][ \t]*)(?P<value>[^\s\"'`,;()\[\]{{}}<>]+)[ \t]*$",
    re.IGNORECASE | re.MULTILINE,
)
_KEY_HINTS = ("pass", "secret", "token", "key", "credential")
_ENV_NAME = re.compile(r"[A-Z][A-Z0-9_]*")
_DOTTED_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_PLAIN_PUNCTUATION = frozenset("_-./:")

# --- PEM blocks over several lines --------------------------------------------------------
_PEM_BEGIN = re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----")
_PEM_END = "-----END "
_PEM_BODY = re.compile(r"[ \t]*(?:[A-Za-z0-9+/=]{16,}|[A-Za-z-]+:.*|)[ \t\r]*")


def redact_secrets(text: str) -> tuple[str, int]:
    """Replace secret-looking tokens, assignments and private keys with SECRET_REDACTION.

    Returns the new text and how many secrets were replaced. The number of lines never
    changes. Ordinary code (`token = get_token()`, `api_key_env = "OPENAI_API_KEY"`) is kept.
    """
    count = 0
    if "PRIVATE KEY" in text:
        text, found = _redact_pem_blocks(text)
        count += found
    for hint, pattern in _TOKENS:
        if hint in text:
            text, found = pattern.subn(SECRET_REDACTION, text)
            count += found
    if "://" in text:
        text, found = _sub_values(_URL_PASSWORD, text, _looks_like_url_password)
        count += found
    lowered = text.lower()
    if any(hint in lowered for hint in _KEY_HINTS):
        text, found = _sub_values(_QUOTED_ASSIGNMENT, text, _looks_like_quoted_secret)
        count += found
        text, found = _sub_values(_BARE_ASSIGNMENT, text, _looks_like_bare_secret)
        count += found
    if count:
        logger.debug("redacted %d secret-looking value(s)", count)
    return text, count


def _sub_values(
    pattern: re.Pattern[str], text: str, is_secret: Callable[[str], bool]
) -> tuple[str, int]:
    """Replace the `value` group of each match that `is_secret` accepts; keep the rest."""
    replaced = 0

    def replace(match: re.Match[str]) -> str:
        nonlocal replaced
        value = match.group("value")
        if not is_secret(value):
            return match.group(0)
        replaced += 1
        start, end = match.span("value")
        whole_start = match.start()
        whole = match.group(0)
        return whole[: start - whole_start] + SECRET_REDACTION + whole[end - whole_start :]

    return pattern.sub(replace, text), replaced


def _character_classes(value: str) -> int:
    lower = any(c.islower() for c in value)
    upper = any(c.isupper() for c in value)
    digit = any(c.isdigit() for c in value)
    symbol = any(not c.isalnum() and c not in _PLAIN_PUNCTUATION for c in value)
    return lower + upper + digit + symbol


def _looks_like_quoted_secret(value: str) -> bool:
    # Env-var names, templates and single-class words (`changeme`, paths) are configuration,
    # not credentials; a real secret mixes at least two character classes.
    if len(value) < SECRET_VALUE_MIN_CHARS or value[0] in "$<{%":
        return False
    if _ENV_NAME.fullmatch(value) or SECRET_REDACTION in value:
        return False
    return _character_classes(value) >= 2


def _looks_like_bare_secret(value: str) -> bool:
    # Unquoted values are mostly code (`token = make_token2`), so demand more.
    if len(value) < SECRET_BARE_VALUE_MIN_CHARS:
        return False
    if _DOTTED_IDENTIFIER.fullmatch(value) and ("_" in value or "." in value):
        return False
    return _looks_like_quoted_secret(value)


def _looks_like_url_password(value: str) -> bool:
    # `host:8080@` style ports and templated credentials are not passwords.
    return not value.isdigit() and value[0] not in "$<{%" and SECRET_REDACTION not in value


def _redact_pem_blocks(text: str) -> tuple[str, int]:
    """Blank every line of a multi-line private key block, one redaction per line."""
    lines = text.split("\n")
    count = 0
    index = 0
    while index < len(lines):
        begin = _PEM_BEGIN.search(lines[index])
        # A BEGIN marker only counts when key material follows; code that merely mentions
        # the marker (a parser, this module) is left alone.
        if begin is None or index + 1 >= len(lines) or not _is_pem_body(lines[index + 1]):
            index += 1
            continue
        count += 1
        lines[index] = lines[index][: begin.start()] + SECRET_REDACTION
        index += 1
        while index < len(lines):
            line = lines[index]
            if _PEM_END in line:
                lines[index] = SECRET_REDACTION
                index += 1
                break
            # Encrypted keys put a blank line between their headers and the body.
            blank_inside = not line.strip() and index + 1 < len(lines)
            if not (_is_pem_body(line) or (blank_inside and _is_pem_body(lines[index + 1]))):
                break
            lines[index] = SECRET_REDACTION
            index += 1
    return "\n".join(lines), count


def _is_pem_body(line: str) -> bool:
    return _PEM_END in line or (bool(line.strip()) and _PEM_BODY.fullmatch(line) is not None)
