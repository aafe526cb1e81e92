"""The cheap ways through redaction give exactly what the plain way gives: `redact_lines`
(one call for many lines) against `redact_secrets` per line, `redact_secrets` (the assignment
rules on the hinted lines only) against the rules over the whole text, and the token patterns
written to start on a literal against the rule sets' originals (kept here as the reference), on
text built from pieces of every secret shape, key word and separator the rules look at."""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from live_memory.hygiene import might_hold_secret, redact_lines, redact_secrets
from live_memory.hygiene.secret import _redact_assignments, _redact_tokens
from live_memory.hygiene.secret_patterns import TOKEN_NEEDLES, TOKEN_PATTERNS
from tests.hygiene.test_secret import ANTHROPIC, AWS, GITHUB, GITHUB_PAT, JWT, OPENAI, SLACK

# Pieces the rules react to (hints, key words, operators, quotes, token bodies), so that
# random joins often form, nearly form or break a secret.
PIECES = [
    *(AWS, OPENAI, ANTHROPIC, GITHUB, GITHUB_PAT, SLACK, JWT),
    "AKIA",
    "ASIA",
    "A3TX",
    "sk-",
    "ghp_",
    "glpat-",
    "xoxb-",
    "npm_",
    "hf_",
    "SG.",
    "sq0csp-",
    "SK",
    "AIza",
    "eyJ",
    "pypi-AgE",
    ":_authToken=",
    "AccountKey=",
    "shpat_",
    "dop_v1_",
    "https://",
    "hooks.slack.com/services/",
    "discord.com/api/webhooks/1234/",
    "-us12",
    "://user:",
    "@host",
    "Bearer ",
    "token\t",
    "Basic ",
    "password",
    "passwd",
    "secret",
    "api_key",
    "apiKey",
    "client_secret",
    "TOKEN",
    "_PASSWORD",
    "export ",
    "STRIPE_KEY",
    " = ",
    "=",
    ": ",
    ":",
    ":=",
    "=>",
    "'",
    '"',
    "`",
    " ",
    "\t",
    "#",
    ".",
    "_",
    "-",
    "/",
    "0123456789abcdef",
    "Tr0ub4dor&3xyz",
    "a1B2c3D4e5F6g7H8i9J0",
    "wJalrXUtnFEMI/K7MDENG",
    "MNO",
    "Mabcdefghijklmnopqrstuvwx.abcdef.abcdefghijklmnopqrstuvwxyz0",
    "12345678:AA",
    "ABCDEFGHIJKLMNOP",
    "settings.SECRET_KEY",
    "DB_PWD",
    "X_AUTH",
    "\u212aEY",  # the Kelvin sign: lower-cases to `k` (the line's hint test must see it)
    "pa\u017f\u017f",  # long s, likewise `s`
    "${DB}",
    # round three: key words inside names, call and header forms, parameters, command lines
    "GOCSPX-",
    "LS0tLS1CRUdJTi",
    "xoxe-",
    ".ey",
    "Private-Lines: 1",
    "mysql -p",
    "sshpass -p ",
    "redis-cli -a ",
    "--password ",
    "?sig=",
    ";Pwd=",
    "&",
    "define('",
    "', '",
    "(",
    ")",
    "PG",
    "_PROD",
    "_key_base",
    "_url",
    "auth",
    "redis://:",
    "str",
    "x",
    "\r",
]
LINE = st.lists(st.sampled_from(PIECES) | st.text(max_size=4), max_size=12).map("".join)
LINES = st.lists(LINE.map(lambda line: line.replace("\n", " ")), max_size=8)


@settings(max_examples=400, deadline=None)
@given(LINES)
def test_lines_redacted_in_one_call_are_redacted_as_each_alone(lines: list[str]) -> None:
    assert redact_lines(lines) == [redact_secrets(line)[0] for line in lines]


@settings(max_examples=400, deadline=None)
@given(LINES)
@example(["token x", "Basic\tQWxhZGRpbjpvcGVuIHNlc2FtZQ12"])  # a gate seen on another line
@example(['\u0130 api_key = "a1B2c3D4e5F6g7H8"', "x"])  # lower-cases longer: line by line
def test_the_assignment_rules_on_hinted_lines_give_what_they_give_over_the_whole_text(
    lines: list[str],
) -> None:
    text = "\n".join(lines)
    tokens, found = _redact_tokens(text)
    plain, more = _redact_assignments(tokens)  # every rule over the whole text at once
    assert redact_secrets(text) == (plain, found + more)


@settings(max_examples=400, deadline=None)
@given(LINES)
@example(["PuTTY-User-Key-File-3: ssh-rsa", "Private-Lines: 1", "AAAAB3NzaC1yc2EAAAADAQAB"])
def test_any_text_redaction_changes_holds_the_secret_hint(lines: list[str]) -> None:
    """Grep redacts before matching only the files the hint finds: it must miss none."""
    text = "\n".join(lines)
    assert redact_secrets(text)[0] == text or might_hold_secret(text), text


def test_a_key_block_among_the_lines_is_still_judged_line_by_line() -> None:
    lines = ["-----BEGIN RSA PRIVATE KEY-----", "MIIEpAIBAAKCAQEAq8d0sVbVZx3mZr0aQ9Jk2Tc"]
    # Alone, the body line is just base64 and the BEGIN line has no key after it.
    assert redact_lines(lines) == lines
    assert redact_lines([]) == []


# secret_patterns.TOKEN_PATTERNS as first written (a leading `\\b`), in the same order.
REFERENCE = (
    re.compile(
        "\\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\\b"
        "(?:[,;|\\t ]{1,3}[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=]))?"
    ),
    re.compile("\\bsk-(?=[A-Za-z0-9_-]*\\d)[A-Za-z0-9_-]{20,}"),
    re.compile("\\bgh[pousr]_[A-Za-z0-9_]{36,}\\b"),
    re.compile("\\bgithub_pat_[A-Za-z0-9_]{22,}\\b"),
    re.compile("\\b(?:glpat|gldt|glft|glsoat|glrt|glimt|glptt|glagent|gloas)-[A-Za-z0-9_-]{20,}"),
    re.compile("\\bglcbt-(?:[0-9a-fA-F]{2}_)?[A-Za-z0-9_-]{20,}"),
    re.compile("\\bGR1348941[A-Za-z0-9_-]{20,}"),
    re.compile("\\bxox[abposre]-[A-Za-z0-9-]{10,}", re.IGNORECASE),
    re.compile("https://hooks\\.slack\\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+-]{20,}"),
    re.compile(
        "https://(?:ptb\\.|canary\\.)?discord(?:app)?\\.com/api/webhooks/\\d+/[A-Za-z0-9_-]{20,}"
    ),
    re.compile("\\b[MNO][A-Za-z\\d_-]{23,25}\\.[A-Za-z\\d_-]{6}\\.[A-Za-z\\d_-]{27,}"),
    re.compile("\\b[sr]k_(?:live|test|prod)_[A-Za-z0-9]{10,99}\\b"),
    re.compile("\\bnpm_[A-Za-z0-9]{36}\\b"),
    re.compile("(?<=:_authToken=)[^\\s\\\"']+"),
    re.compile("\\bpypi-AgE[A-Za-z0-9_-]{50,}"),
    re.compile("\\bAIza[0-9A-Za-z_-]{35}\\b"),
    re.compile("\\bey[A-Za-z0-9_-]{8,}\\.e[wy][A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}"),
    re.compile("\\bSG\\.[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]{43}\\b"),
    re.compile("\\bsq0(?:csp|atp)-[0-9A-Za-z_-]{22,43}\\b"),
    re.compile("\\bSK[0-9a-f]{32}\\b"),
    re.compile("\\b\\d{8,10}:AA[0-9A-Za-z_-]{33}\\b"),
    re.compile("\\b[0-9a-f]{32}-us[0-9]{1,2}\\b"),
    re.compile("(?<=AccountKey=)[A-Za-z0-9+/=]{86,88}"),
    re.compile("\\bhf_[A-Za-z]{34}\\b"),
    re.compile("\\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\\b"),
    re.compile("\\bdo[por]_v1_[a-f0-9]{64}\\b"),
    re.compile("\\bGOCSPX-[A-Za-z0-9_-]{24,}"),
    re.compile(
        "\\bLS0tLS1CRUdJTi(?!B(?:DRVJU|QVUJM|SU0EgUFVC|PUEVOU1NIIFBVQ|YNTA5|ORVcgQ0VS|UUlVTVEVE|QR1AgUFVC))"
        "[A-Za-z0-9+/]{16,}={0,2}"
    ),
    re.compile("-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[^\\n]*?-----END [A-Z0-9 ]*PRIVATE KEY-----"),
)


def test_every_token_pattern_has_its_reference_and_needle() -> None:
    assert len(REFERENCE) == len(TOKEN_PATTERNS) == len(TOKEN_NEEDLES)


def _spans(pattern: re.Pattern[str], text: str) -> list[tuple[int, int]]:
    return [m.span() for m in pattern.finditer(text)]


@pytest.mark.parametrize("index", range(len(REFERENCE)))
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_token_patterns_find_the_spans_their_reference_finds(
    index: int, data: st.DataObject
) -> None:
    reference, (hint, pattern) = REFERENCE[index], TOKEN_PATTERNS[index]
    needle = re.compile(TOKEN_NEEDLES[index])
    noise = st.sampled_from(PIECES) | st.text(max_size=3)
    match = data.draw(st.from_regex(reference))
    before, after = ("".join(data.draw(st.lists(noise, max_size=3))) for _ in range(2))
    # Drawing a match is what costs (hypothesis draws it character by character); checking it
    # is cheap. So each drawn match is also checked right after and right before every piece
    # (word characters, separators, hints): the boundaries where a rewritten start can differ.
    texts = [before + match + after, *(p + match for p in PIECES), *(match + p for p in PIECES)]
    for text in texts:
        assert _spans(pattern, text) == _spans(reference, text), text
        assert hint in text or not reference.search(text)  # the hint never skips a match
        assert needle.search(text) or not reference.search(text)  # nor does the needle
