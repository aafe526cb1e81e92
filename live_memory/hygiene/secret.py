"""Secret files and secret-looking text: what must never reach the model verbatim.

Two layers. `is_secret_path` (hygiene/secret_paths.py) keeps whole files (`.env`, keys,
credential stores) out of every tool. `redact_secrets` masks tokens that slipped into ordinary
files (an API key pasted into a config, a private key in a fixture). Redaction keeps the line
count, so `cat -n` style line numbers and Grep hits still point at the right lines.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from live_memory.config.constants import (
    SECRET_BARE_VALUE_MIN_CHARS,
    SECRET_REDACTION,
    SECRET_VALUE_MIN_CHARS,
)
from live_memory.hygiene.secret_patterns import TOKEN_PATTERNS

__all__ = ["redact_lines", "redact_secrets"]


# --- tokens with a recognisable shape: see secret_patterns (maintained rule sets) -------
_TOKENS = TOKEN_PATTERNS

# `Authorization: Bearer <token>` (headers, curl -H, HTTP logs) and a bare `Bearer <token>`.
_BEARER = re.compile(
    r"(?P<keep>\b(?:[Bb]earer|BEARER|[Tt]oken|[Bb]asic)[ \t]+)(?P<value>[A-Za-z0-9._~+/-]{16,}=*)"
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
_BARE_VALUE = r"(?P<value>[^\s\"'`,;()\[\]{}<>#]+)[ \t]*(?:#.*)?$"
_BARE_ASSIGNMENT = re.compile(
    rf"(?P<keep>{_KEY_WORDS}[ \t]*[:=][ \t]*){_BARE_VALUE}", re.IGNORECASE | re.MULTILINE
)
# Environment / config style (`.env`, shell `export`, YAML, CI files): an UPPER_CASE name
# ending in a secret word, `KEY` and `AUTH` included (`STRIPE_KEY=…`, `NPM_TOKEN: …`), which
# lower-case code (`cache_key = …`) would make too noisy.
_ENV_ASSIGNMENT = re.compile(
    r"(?P<keep>^[ \t]*(?:export[ \t]+)?[A-Z][A-Z0-9_]*"
    r"(?:TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|PASS|PWD|KEY|AUTH|CREDENTIALS?)"
    rf"[ \t]*[:=][ \t]*){_BARE_VALUE}",
    re.MULTILINE,
)
_IDENTIFIER_LIKE = re.compile(r"[A-Za-z0-9_-]+")
_SEGMENT = re.compile(r"[_-]")
_KEY_HINTS = ("pass", "secret", "token", "key", "credential")
_ENV_HINTS = ("TOKEN", "SECRET", "PASS", "PWD", "KEY", "AUTH", "CREDENTIAL")
_BEARER_HINTS = ("bearer", "token", "basic")  # what _BEARER itself needs (a tab may follow)
# The gates of _redact_assignments, as it tests them: on the text, and on its lower case. A
# line where none opens has no assignment to redact. Each rule's gate is a word its pattern
# cannot match without, and no pattern spans a line, so the rules give the same result over
# each gated line alone as over the whole text.
_CASED_GATES = ("://", *_ENV_HINTS)
_LOWERED_GATES = (*_BEARER_HINTS, *_KEY_HINTS)
_ENV_NAME = re.compile(r"[A-Z][A-Z0-9_]*")
_DOTTED_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_PLAIN_PUNCTUATION = frozenset("_-./:")

# --- PEM blocks over several lines --------------------------------------------------------
_PEM_BEGIN = re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----")
_PEM_END = "-----END "
_PEM_BODY = re.compile(r"[ \t]*(?:[A-Za-z0-9+/=]{16,}|[A-Za-z-]+:.*|)[ \t\r]*")
# Inside a block every base64 line counts, the short last one too.
_PEM_ANY_BODY = re.compile(r"[ \t]*(?:[A-Za-z0-9+/=]+|[A-Za-z-]+:.*)[ \t\r]*")


def redact_secrets(text: str) -> tuple[str, int]:
    """Replace secret-looking tokens, assignments and private keys with SECRET_REDACTION.

    Returns the new text and how many secrets were replaced. The number of lines never
    changes. Ordinary code (`token = get_token()`, `api_key_env = "OPENAI_API_KEY"`) is kept.
    """
    count = 0
    if "PRIVATE KEY" in text:
        text, count = _redact_pem_blocks(text)
    text, found = _redact_tokens(text)
    text, more = _redact_hinted_lines(text)
    return text, count + found + more


def redact_lines(lines: Sequence[str]) -> list[str]:
    """Each line (none holds a newline) redacted as `redact_secrets` would redact it alone.
    No shape but a PEM block spans lines: the token shapes (fast literal-led patterns) run
    once over all; the slow assignment rules only on the lines where their gates open."""
    joined = "\n".join(lines)
    if "PRIVATE KEY" in joined or joined.count("\n") != max(len(lines) - 1, 0):
        return [redact_secrets(line)[0] for line in lines]  # a BEGIN line and the next
    return _redact_hinted_lines(_redact_tokens(joined)[0])[0].split("\n") if lines else []


def _redact_tokens(text: str) -> tuple[str, int]:
    count = 0
    for hint, pattern in _TOKENS:
        if hint in text:
            text, found = pattern.subn(SECRET_REDACTION, text)
            count += found
    return text, count


def _redact_hinted_lines(text: str) -> tuple[str, int]:
    """The assignment rules on each line where one of their gates opens, the others untouched
    (no rule's pattern spans a line, so this is what they give over the whole text). Over a
    file of ordinary code the case-insensitive patterns cost ~0.8 ms per KB (30 ms for a
    38 KB module, on every teed read and every Read); the gates are found with str.find."""
    lowered = text.lower()
    if len(lowered) != len(text):  # a character lower-cases to two: positions would differ
        lines = [_redact_assignments(line) for line in text.split("\n")]
        return "\n".join(line for line, _ in lines), sum(found for _, found in lines)
    starts: set[int] = set()
    for haystack, hints in ((text, _CASED_GATES), (lowered, _LOWERED_GATES)):
        for hint in hints:
            at = haystack.find(hint)
            while at >= 0:
                starts.add(text.rfind("\n", 0, at) + 1)
                at = haystack.find("\n", at)
                at = haystack.find(hint, at) if at >= 0 else -1  # on the next lines
    parts: list[str] = []
    count = done = 0
    for start in sorted(starts):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        line, found = _redact_assignments(text[start:end])
        parts += (text[done:start], line)
        count, done = count + found, end
    parts.append(text[done:])
    return "".join(parts), count


def _redact_assignments(text: str) -> tuple[str, int]:
    count = 0
    if "://" in text:
        text, count = _sub_values(_URL_PASSWORD, text, _looks_like_url_password)
    lowered = text.lower()
    if any(hint in lowered for hint in _BEARER_HINTS):
        text, found = _sub_values(_BEARER, text, _looks_like_token)
        count += found
    if any(hint in lowered for hint in _KEY_HINTS):
        text, found = _sub_values(_QUOTED_ASSIGNMENT, text, _looks_like_quoted_secret)
        count += found
        text, found = _sub_values(_BARE_ASSIGNMENT, text, _looks_like_bare_secret)
        count += found
    if any(hint in text for hint in _ENV_HINTS):
        text, found = _sub_values(_ENV_ASSIGNMENT, text, _looks_like_bare_secret)
        count += found
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
    # Unquoted values are mostly code (`token = make_token2`, `key = settings.SECRET_KEY`),
    # so demand more: never a dotted name; an identifier-like value (`npm_…`, `sk_test_…`,
    # `Abcdef_123456_…`) only when it looks generated, not written by a person.
    if len(value) < SECRET_BARE_VALUE_MIN_CHARS:
        return False
    if "." in value and _DOTTED_IDENTIFIER.fullmatch(value):
        return False
    if _IDENTIFIER_LIKE.fullmatch(value):
        return _looks_generated(value) and _looks_like_quoted_secret(value)
    return _looks_like_quoted_secret(value)


def _looks_generated(value: str) -> bool:
    """A random-looking segment (mixed classes, 8+ chars) or 3 character classes over 16+
    characters: `hashed_pw_2024` and `DEFAULT_TOKEN_NAME` are names, `npm_4f9Qx…` is not."""
    if any(len(part) >= 8 and _character_classes(part) >= 2 for part in _SEGMENT.split(value)):
        return not _ENV_NAME.fullmatch(value)
    return len(value) >= 16 and _character_classes(value) >= 3


def _looks_like_token(value: str) -> bool:
    # `Bearer authentication`, `token based` are prose: a token mixes classes.
    return _character_classes(value) >= 2 and not value.isalpha()


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
            if not (_in_pem_body(line) or (blank_inside and _is_pem_body(lines[index + 1]))):
                break
            lines[index] = SECRET_REDACTION
            index += 1
    return "\n".join(lines), count


def _in_pem_body(line: str) -> bool:
    return _PEM_END in line or (bool(line.strip()) and _PEM_ANY_BODY.fullmatch(line) is not None)


def _is_pem_body(line: str) -> bool:
    return _PEM_END in line or (bool(line.strip()) and _PEM_BODY.fullmatch(line) is not None)
