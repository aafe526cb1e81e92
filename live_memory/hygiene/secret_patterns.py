"""Token shapes that are secrets wherever they appear, from maintained rule sets.

The shapes follow the detect-secrets plugins (Yelp, Apache License 2.0; version 1.5.0:
aws, azure_storage_key, discord, github_token, gitlab_token, jwt, mailchimp, npm, openai,
private_key, pypi_token, sendgrid, slack, square_oauth, stripe, telegram_token, twilio) and,
where detect-secrets has none, the gitleaks default rules (MIT: npm access tokens, Stripe
test keys, Slack webhooks, Discord webhooks, Hugging Face, Shopify, DigitalOcean). We keep a
copy rather than depend on detect-secrets: it detects per line through Python plugin objects
(and pulls in requests and pyyaml), while we mask text at every egress and must keep each
pattern linear-time (no nested quantifiers; reviewed here) and cheap (a literal hint skips
the regex when absent). detect-secrets' keyword and high-entropy plugins are covered by the
assignment rules in `secret.py`; its weak shapes (Artifactory `AP…`, IBM/SoftLayer keyword
forms) are left out because masking them would corrupt ordinary code the model must read.

Each entry: (literal hint that must occur in the text, pattern of the whole token). Patterns
start on a literal where they can (see `_word`); the originals are kept as the reference in
tests/hygiene/test_redaction_speedups.py, which checks both find the same spans.
`TOKEN_NEEDLES` (same order) are what each token must contain, written in the part of regex
syntax ripgrep and Python share (no look-around): Grep finds the files that need redaction
before matching with them (tests check each needle is found wherever its token is).
"""

from __future__ import annotations

import re

__all__ = ["TOKEN_NEEDLES", "TOKEN_PATTERNS"]


def _word(literal: str, rest: str) -> re.Pattern[str]:
    """`\b{literal}{rest}`, written to start on the literal: `gh(?<=\bgh)…` matches the same
    spans, but the regex engine finds candidates with a fast literal scan, where a leading
    `\b` makes it try every position (20-50x slower over a 100 KB text)."""
    escaped = re.escape(literal)
    return re.compile(rf"{escaped}(?<=\b{escaped}){rest}")


TOKEN_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    # AWS access key ids (detect-secrets aws), with the secret key when it follows as in IAM's
    # downloaded `credentials.csv` (`id,secret`) or a pasted `id secret` pair.
    (
        "A",
        _word(
            "A",
            r"(?:3T[A-Z0-9]|KIA|SIA|BIA|CCA|GPA|IDA|ROA|NPA|NVA|IPA)[0-9A-Z]{16}\b"
            r"(?:[,;|\t ]{1,3}[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=]))?",
        ),
    ),
    # OpenAI / Anthropic style; the digit look-ahead spares prose like `sk-learn-compatible-…`.
    ("sk-", _word("sk-", r"(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{20,}")),
    # GitHub (detect-secrets github_token) and fine-grained PATs.
    ("gh", _word("gh", r"[pousr]_[A-Za-z0-9_]{36,}\b")),
    ("github_pat_", _word("github_pat_", r"[A-Za-z0-9_]{22,}\b")),
    # GitLab (detect-secrets gitlab_token: personal, deploy, feed, runner, CI build, …).
    ("gl", _word("gl", r"(?:pat|dt|ft|soat|rt|imt|ptt|agent|oas)-[A-Za-z0-9_-]{20,}")),
    ("glcbt-", _word("glcbt-", r"(?:[0-9a-fA-F]{2}_)?[A-Za-z0-9_-]{20,}")),
    ("GR1348941", _word("GR1348941", r"[A-Za-z0-9_-]{20,}")),
    # Slack tokens (detect-secrets slack; any case, so no literal hint), config refresh tokens
    # (`xoxe-`, gitleaks slack-config-refresh-token) and incoming webhooks.
    ("", re.compile(r"[xX](?<=\b[xX])(?i:ox[abposre]-[A-Za-z0-9-]{10,})")),
    (
        "hooks.slack.com",
        re.compile(
            r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+-]{20,}"
        ),
    ),
    # Discord bot tokens (detect-secrets discord) and webhooks (gitleaks).
    (
        "discord",
        re.compile(
            r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{20,}"
        ),
    ),
    (".", re.compile(r"[MNO](?<=\b[MNO])[A-Za-z\d_-]{23,25}\.[A-Za-z\d_-]{6}\.[A-Za-z\d_-]{27,}")),
    # Stripe secret and restricted keys, live and test (detect-secrets stripe; gitleaks).
    ("k_", re.compile(r"[sr](?<=\b[sr])k_(?:live|test|prod)_[A-Za-z0-9]{10,99}\b")),
    # npm access tokens (gitleaks npm-access-token; detect-secrets npm covers .npmrc's form).
    ("npm_", _word("npm_", r"[A-Za-z0-9]{36}\b")),
    ("_authToken", re.compile(r"(?<=:_authToken=)[^\s\"']+")),
    # PyPI upload tokens (detect-secrets pypi_token).
    ("pypi-", _word("pypi-AgE", r"[A-Za-z0-9_-]{50,}")),
    # Google API keys.
    ("AIza", _word("AIza", r"[0-9A-Za-z_-]{35}\b")),
    # JSON Web Tokens (detect-secrets jwt, stricter: three non-trivial parts). A part is base64
    # of a JSON object: `{"` gives `eyJ`, `{ "` `eyA`, `{\n` `ew`, so the payload is `e[wy]…`.
    ("ey", _word("ey", r"[A-Za-z0-9_-]{8,}\.e[wy][A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    # SendGrid, Square, Twilio, Telegram, Mailchimp (detect-secrets plugins of those names).
    ("SG.", _word("SG.", r"[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b")),
    ("sq0", _word("sq0", r"(?:csp|atp)-[0-9A-Za-z_-]{22,43}\b")),
    ("SK", _word("SK", r"[0-9a-f]{32}\b")),
    (":AA", re.compile(r"\b\d{8,10}:AA[0-9A-Za-z_-]{33}\b")),
    ("-us", re.compile(r"\b[0-9a-f]{32}-us[0-9]{1,2}\b")),
    # Azure storage account keys (detect-secrets azure_storage_key).
    ("AccountKey=", re.compile(r"(?<=AccountKey=)[A-Za-z0-9+/=]{86,88}")),
    # Hugging Face, Shopify, DigitalOcean (gitleaks).
    ("hf_", _word("hf_", r"[A-Za-z]{34}\b")),
    ("shp", _word("shp", r"(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b")),
    ("_v1_", _word("do", r"[por]_v1_[a-f0-9]{64}\b")),
    # Google OAuth client secrets (gitleaks gcp; the `GOCSPX-` form Google issues since 2021).
    ("GOCSPX-", _word("GOCSPX-", r"[A-Za-z0-9_-]{24,}")),
    # A PEM block in base64 (`LS0tLS1CRUdJTi` is `-----BEGIN`): kubeconfig `client-key-data`,
    # Kubernetes secrets, CI variables. Certificates and public keys are public: kept.
    (
        "LS0tLS1CRUdJTi",
        _word(
            "LS0tLS1CRUdJTi",
            r"(?!B(?:DRVJU|QVUJM|SU0EgUFVC|PUEVOU1NIIFBVQ|YNTA5|ORVcgQ0VS|UUlVTVEVE|QR1AgUFVC))"
            r"[A-Za-z0-9+/]{16,}={0,2}",
        ),
    ),
    # A PEM private key escaped onto one line, as in service-account JSON.
    (
        "PRIVATE KEY",
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[^\n]*?-----END [A-Z0-9 ]*PRIVATE KEY-----"
        ),
    ),
)

TOKEN_NEEDLES: tuple[str, ...] = (
    r"A(?:3T[A-Z0-9]|KIA|SIA|BIA|CCA|GPA|IDA|ROA|NPA|NVA|IPA)[0-9A-Z]{16}",
    r"sk-[A-Za-z0-9_-]{20}",
    r"gh[pousr]_",
    r"github_pat_",
    r"gl(?:pat|dt|ft|soat|rt|imt|ptt|agent|oas)-",
    r"glcbt-",
    r"GR1348941",
    r"(?i:xox[abposre]-)",
    r"hooks\.slack\.com",
    r"discord",
    r"[MNO][A-Za-z\d_-]{23,25}\.[A-Za-z\d_-]{6}\.",
    r"[sr]k_(?:live|test|prod)_",
    r"npm_",
    r":_authToken=",
    r"pypi-AgE",
    r"AIza",
    r"ey[A-Za-z0-9_-]{8,}\.e[wy]",
    r"SG\.",
    r"sq0",
    r"SK[0-9a-f]{32}",
    r":AA",
    r"-us[0-9]",
    r"AccountKey=",
    r"hf_",
    r"shp(?:at|ca|pa|ss)_",
    r"do[por]_v1_",
    r"GOCSPX-",
    r"LS0tLS1CRUdJTi",
    r"PRIVATE KEY",
)
