"""The cheap ways through redaction give exactly what the plain way gives: `redact_lines`
(one call for many lines) against `redact_secrets` per line, on text built from pieces of
every secret shape, key word and separator the rules look at."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from live_memory.hygiene import redact_lines, redact_secrets
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
    "${DB}",
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


def test_a_key_block_among_the_lines_is_still_judged_line_by_line() -> None:
    lines = ["-----BEGIN RSA PRIVATE KEY-----", "MIIEpAIBAAKCAQEAq8d0sVbVZx3mZr0aQ9Jk2Tc"]
    # Alone, the body line is just base64 and the BEGIN line has no key after it.
    assert redact_lines(lines) == lines
    assert redact_lines([]) == []
