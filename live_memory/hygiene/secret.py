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
from live_memory.hygiene.secret_patterns import TOKEN_NEEDLES, TOKEN_PATTERNS

__all__ = ["PUTTY_PRIVATE", "SECRET_HINT", "might_hold_secret", "redact_lines", "redact_secrets"]


# --- tokens with a recognisable shape: see secret_patterns (maintained rule sets) -------
_TOKENS = TOKEN_PATTERNS

# `Authorization: Bearer <token>` (headers, curl -H, HTTP logs) and a bare `Bearer <token>`.
_BEARER = re.compile(
    r"(?P<keep>\b(?:[Bb]earer|BEARER|[Tt]oken|[Bb]asic)[ \t]+)(?P<value>[A-Za-z0-9._~+/-]{16,}=*)"
)

# Password in a URL (`scheme://user:password@host`): the user may be empty (`redis://:pw@`) and
# the password may hold a `/`; the user name is kept.
_URL_PASSWORD = re.compile(
    r"(?P<keep>\b[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@'\"]*:)(?P<value>[^\s@'\"]+)(?=@)"
)

# --- secret-looking assignments, by form ---------------------------------------------------
# A key holds a key word; up to three `_`/`-` parts may follow it (`DB_PASSWORD_PROD`,
# `secret_key_base`), unless the last names something about the secret rather than the secret
# (`token_url`, `api_key_env`, `PASSWORD_MIN_LENGTH`). `auth` alone is weak (`auth: "oauth2"`):
# its value must look generated (docker's `"auth": "<base64>"`).
_KEY_WORDS = (
    r"(?P<word>password|passwd|passphrase|secret|token|credentials?|api[_-]?key|apikey"
    r"|access[_-]?key|private[_-]?key|signing[_-]?key|encryption[_-]?key|auth[_-]?key|auth)"
)
_TAIL = r"(?P<tail>(?:[_-][A-Za-z0-9]{1,32}){0,3})"  # bounded: linear over `a_a_a_…`
# fmt: off
_METADATA = frozenset({
    "name", "names", "file", "path", "dir", "url", "uri", "env", "var", "type", "kind", "len",
    "length", "size", "bits", "ttl", "timeout", "expiry", "expires", "age", "count", "max", "min",
    "id", "ids", "header", "field", "param", "prefix", "suffix", "format", "pattern", "regex",
    "hint", "label", "prompt", "mode", "enabled", "required", "algorithm", "version", "rotation",
    "hash", "store", "provider", "source", "location", "endpoint", "method",
})
# fmt: on
_WEAK_WORDS = frozenset({"auth"})
# `key = "v"`, `key: str = "v"`, `"key": "v"`, `env["KEY"] = "v"`, `define('KEY', 'v')`,
# `setKey("v")`: a key, then an operator, a comma after a quoted key, or a call's parenthesis.
_OPERATOR = (
    r"(?:[\"'`]?\]?[ \t]*(?::[ \t]*[A-Za-z_][\w.\[\]|, ]*?[ \t]*)?(?::=|=>|==?|:)"
    r"|(?P<pair>[\"'][ \t]*,)|\()[ \t]*"  # (not `a`, `b`: a list of names in Markdown)
)
_QUOTED_ASSIGNMENT = re.compile(
    rf"(?P<keep>{_KEY_WORDS}{_TAIL}{_OPERATOR}(?P<quote>[\"'`]))(?P<value>[^\"'`\s]+)(?P=quote)",
    re.IGNORECASE | re.ASCII,  # ASCII: the long s or the Kelvin sign would match a key
    # word where no gate opens
)
# An unquoted value ends where a shell word, a URL parameter, a header inside a quoted string
# or a line does (`PGPASSWORD=pw pg_dump`, `&password=pw&`, `"X-API-Key: pw"`); never before a
# call's `(` (`token = make_token()` is code).
_BARE_VALUE = r"(?P<value>[^\s\"'`,;()\[\]{}<>#&|]+)(?=[\s\"'`,;)\]}&|#]|$)"
_BARE_ASSIGNMENT = re.compile(
    rf"(?P<keep>{_KEY_WORDS}{_TAIL}[ \t]*[:=][ \t]*){_BARE_VALUE}",
    re.IGNORECASE | re.MULTILINE | re.ASCII,
)
# Environment / config style (`.env`, shell, YAML, CI files, `putenv("…")`): an UPPER_CASE
# name with a key word in it, `KEY` and `AUTH` included (`STRIPE_KEY=…`), which lower-case code
# (`cache_key = …`) would make too noisy. Long words may be glued to a prefix (`PGPASSWORD`).
_ENV_ASSIGNMENT = re.compile(
    r"(?P<keep>(?<![\w$.-])(?:export[ \t]+)?(?P<name>[A-Z][A-Z0-9_]*)[ \t]*[:=][ \t]*)"
    + _BARE_VALUE,
    re.MULTILINE,
)
_ENV_GLUED = ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "CREDENTIALS")
_ENV_WORDS = frozenset({*_ENV_GLUED, "PASS", "PWD", "KEY", "AUTH"})
# URL and connection-string parameters with short names (`?sig=` of an Azure SAS, `;Pwd=`,
# `?key=`); the long names (`&password=`, `;SharedAccessKey=`) are bare assignments.
_PARAMETER = re.compile(
    r"(?P<keep>[?&;](?:sig|signature|pwd|pass|key)=)(?P<value>[^&;\s\"'`<>#\[][^&;\s\"'`<>#]*)",
    re.IGNORECASE | re.ASCII,
)
# A password on a command line: `mysql -pPW`, `sshpass -p PW`, `redis-cli -a PW`,
# `--password PW` (the `=` form is a bare assignment).
_COMMAND_LINE = re.compile(
    r"(?P<keep>(?:\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)\b[^\n;&|]*?[ \t]-p"
    r"|\bsshpass[ \t]+-p[ \t]*|\bredis-cli\b[^\n;&|]*?[ \t]-a[ \t]+"
    r"|--(?:password|passwd|pass|secret|token|api-key|apikey)[ \t]+))"
    r"(?P<value>[^\s\"'`;&|\[-][^\s\"'`;&|]*)"
)
_IDENTIFIER_LIKE = re.compile(r"[A-Za-z0-9_-]+")
_SEGMENT = re.compile(r"[_-]")
_PORT_AND_PATH = re.compile(r"\d{1,5}(?:/|$)")
_ENV_NAME = re.compile(r"[A-Z][A-Z0-9_]*")
_DOTTED_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_PLAIN_PUNCTUATION = frozenset("_-./:")

# --- private key blocks over several lines ------------------------------------------------
_PEM_BEGIN = re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----")
_PEM_END = "-----END "
_PEM_BODY = re.compile(r"[ \t]*(?:[A-Za-z0-9+/=]{16,}|[A-Za-z-]+:.*|)[ \t\r]*")
# Inside a block every base64 line counts, the short last one too.
_PEM_ANY_BODY = re.compile(r"[ \t]*(?:[A-Za-z0-9+/=]+|[A-Za-z-]+:.*)[ \t\r]*")
# A PuTTY key (`.ppk` or pasted anywhere): `Private-Lines: N`, then N lines of base64.
PUTTY_PRIVATE = "Private-Lines:"
_PUTTY_BODY = re.compile(r"[-+]?[ \t]*[A-Za-z0-9+/=]+[ \t\r]*")  # (`+`/`-`: in a diff)
_PUTTY_MAX_LINES = 128  # a 16384-bit RSA key is ~90 lines

Judge = Callable[[re.Match[str]], bool]


def redact_secrets(text: str) -> tuple[str, int]:
    """Replace secret-looking tokens, assignments and private keys with SECRET_REDACTION.

    Returns the new text and how many secrets were replaced. The number of lines never
    changes. Ordinary code (`token = get_token()`, `api_key_env = "OPENAI_API_KEY"`) is kept.
    """
    count = 0
    if "PRIVATE KEY" in text:
        text, count = _redact_pem_blocks(text)
    if PUTTY_PRIVATE in text:
        text, found = _redact_putty_blocks(text)
        count += found
    text, found = _redact_tokens(text)
    text, more = _redact_hinted_lines(text)
    return text, count + found + more


def redact_lines(lines: Sequence[str]) -> list[str]:
    """Each line (none holds a newline) redacted as `redact_secrets` would redact it alone.
    No shape but a key block spans lines: the token shapes (fast literal-led patterns) run
    once over all; the slow assignment rules only on the lines where their gates open."""
    joined = "\n".join(lines)
    blocks = "PRIVATE KEY" in joined or PUTTY_PRIVATE in joined
    if blocks or joined.count("\n") != max(len(lines) - 1, 0):
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
    for haystack, hints in ((text, CASED_GATES), (lowered, LOWERED_GATES)):
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
    count, lowered = 0, text.lower()
    for cased, lowered_gates, pattern, judge in _RULES:
        if any(g in text for g in cased) or any(g in lowered for g in lowered_gates):
            text, found = _sub_values(pattern, text, judge)
            count += found
            lowered = text.lower() if found else lowered
    return text, count


def _sub_values(pattern: re.Pattern[str], text: str, is_secret: Judge) -> tuple[str, int]:
    """Replace the `value` group of each match that `is_secret` accepts; keep the rest."""
    replaced = 0

    def replace(match: re.Match[str]) -> str:
        nonlocal replaced
        if not is_secret(match):
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
    # Env-var names, templates, URLs (their passwords have their own rule) and single-class
    # words (`changeme`, paths) are configuration, not credentials; a real secret mixes at
    # least two character classes.
    if len(value) < SECRET_VALUE_MIN_CHARS or value[0] in "$<{%" or "://" in value:
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
    characters: `hashed_pw_2024` and `DEFAULT_TOKEN_NAME` are names, `npm_4f9Qx…` is not; nor
    is a word of letters alone (`credential: OAuthCredential)` is a type)."""
    if value.isalpha():
        return False
    parts = _SEGMENT.split(value)  # (`_AzureApiKeyT`: a CamelCase part is a name)
    if any(len(p) >= 8 and _character_classes(p) >= 2 and not p.isalpha() for p in parts):
        return not _ENV_NAME.fullmatch(value)
    return len(value) >= 16 and _character_classes(value) >= 3


def _secret_key(match: re.Match[str]) -> bool:
    """The key's tail names no metadata (`token_url`); a weak key word (`auth`, not `oauth`)
    only with a value that looks generated; a quoted pair (`"key", "value"`) not with a word
    (`__all__ = ["APIKey", "Principal"]`)."""
    tail = [part for part in _SEGMENT.split(match.group("tail")) if part]
    value, pair = match.group("value"), match.groupdict().get("pair")
    if (tail and tail[-1].lower() in _METADATA) or (pair and value.isalpha()):
        return False
    if match.group("word").lower() not in _WEAK_WORDS:
        return True
    before = match.string[match.start("word") - 1 : match.start("word")]
    return not before.isalpha() and _looks_generated(value)


def _secret_name(name: str) -> bool:
    """An env name with a key word part (`DB_PASSWORD_PROD`, `PGPASSWORD`) and at most three
    parts after it, the last no metadata (`PASSWORD_MIN_LENGTH`, `GITHUB_TOKEN_FILE`)."""
    parts = name.split("_")
    for index in range(len(parts) - 1, -1, -1):
        part = parts[index]
        if part in _ENV_WORDS or part.endswith(_ENV_GLUED):
            rest = parts[index + 1 :]
            return len(rest) <= 3 and not (rest and rest[-1].lower() in _METADATA)
    return False


def _looks_like_token(match: re.Match[str]) -> bool:
    # `Bearer authentication`, `token based` are prose: a token mixes classes.
    value = match.group("value")
    return _character_classes(value) >= 2 and not value.isalpha()


def _looks_like_password(match: re.Match[str]) -> bool:
    # `host:8080@` or `host:8080/path@` style ports and templated credentials are not
    # passwords.
    value = match.group("value")
    return (
        _PORT_AND_PATH.match(value) is None
        and value[0] not in "$<{%"
        and SECRET_REDACTION not in value
    )


# (cased gates, lower-case gates, pattern, judge): a rule runs on a line holding one of its
# gates; each gate is a word its pattern cannot match without.
_KEY_GATES = ("pass", "secret", "token", "key", "credential", "auth")
_RULES: tuple[tuple[tuple[str, ...], tuple[str, ...], re.Pattern[str], Judge], ...] = (
    (("://",), (), _URL_PASSWORD, _looks_like_password),
    ((), ("bearer", "token", "basic"), _BEARER, _looks_like_token),
    (
        (),
        _KEY_GATES,
        _QUOTED_ASSIGNMENT,
        lambda m: _secret_key(m) and _looks_like_quoted_secret(m.group("value")),
    ),
    (
        (),
        _KEY_GATES,
        _BARE_ASSIGNMENT,
        lambda m: _secret_key(m) and _looks_like_bare_secret(m.group("value")),
    ),
    (
        ("TOKEN", "SECRET", "PASS", "PWD", "KEY", "AUTH", "CREDENTIAL"),
        (),
        _ENV_ASSIGNMENT,
        lambda m: _secret_name(m.group("name")) and _looks_like_bare_secret(m.group("value")),
    ),
    (
        (),
        ("sig=", "signature=", "pwd=", "pass=", "key="),
        _PARAMETER,
        lambda m: _looks_like_quoted_secret(m.group("value")),
    ),
    (
        (),
        ("mysql", "mariadb", "redis-cli", *_KEY_GATES),
        _COMMAND_LINE,
        lambda m: len(m.group("value")) >= 4 and _looks_like_password(m),  # (not `-p PW` in prose)
    ),
)
# The gates of _redact_assignments, as it tests them: on the text, and on its lower case. A
# line where none opens has no assignment to redact. No rule's pattern spans a line, so the
# rules give the same result over each gated line alone as over the whole text.
CASED_GATES = tuple(dict.fromkeys(gate for rule in _RULES for gate in rule[0]))
LOWERED_GATES = tuple(dict.fromkeys(gate for rule in _RULES for gate in rule[1]))


def _redact_putty_blocks(text: str) -> tuple[str, int]:
    """Blank the private lines of a PuTTY key (`Private-Lines: N` and N base64 lines)."""
    lines = text.split("\n")
    count = 0
    for index, line in enumerate(lines):
        head, _, number = line.strip().partition(PUTTY_PRIVATE)
        if head not in ("", "+", "-") or not number.strip().isdigit():
            continue
        body = range(index + 1, min(index + 1 + int(number), index + 1 + _PUTTY_MAX_LINES))
        shown = [at for at in body if at < len(lines) and _PUTTY_BODY.fullmatch(lines[at])]
        count += bool(shown)
        for at in shown:
            lines[at] = SECRET_REDACTION
    return "\n".join(lines), count


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


# What any text `redact_secrets` changes holds (a property test keeps it so): a token's needle,
# a gate of the assignment rules, a key block's marker. In the regex syntax ripgrep and Python
# share, so Grep can find with rg the few files it must redact before matching.
_GATES = sorted({re.escape(gate.lower()) for gate in (*LOWERED_GATES, *CASED_GATES)})
SECRET_HINT = "|".join((*TOKEN_NEEDLES, f"(?i:{'|'.join(_GATES)})", re.escape(PUTTY_PRIVATE)))
_HINT = re.compile(SECRET_HINT)


def might_hold_secret(text: str) -> bool:
    """False when `redact_secrets` would leave `text` as it is (True: it may change it)."""
    return _HINT.search(text) is not None
