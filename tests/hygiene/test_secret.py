from __future__ import annotations

import time

import pytest

from live_memory.config.constants import DEFAULT_SECRET_PATH_PATTERNS, SECRET_REDACTION
from live_memory.hygiene import is_secret_path, redact_secrets

# Built from pieces so this test file does not look like it leaks credentials.
AWS = "AKIA" + "IOSFODNN7EXAMPLE"
OPENAI = "sk-" + "proj-" + "abcDEF1234567890abcdEF12"
ANTHROPIC = "sk-" + "ant-api03-" + "A1b2C3d4E5f6G7h8I9j0KlMn"
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
GITHUB_PAT = "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnop"
SLACK = "xoxb-" + "123456789012-1234567890123-abcdefABCDEF"
JWT = (
    "eyJ"
    + "hbGciOiJIUzI1NiJ9.eyJ"
    + "zdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
)


@pytest.mark.parametrize(
    "path",
    [
        ".env",
        ".env.local",
        "config/.env.production",
        "certs/server.pem",
        "id_rsa",
        "id_ed25519.pub",
        "deploy/prod.key",
        ".netrc",
        "home/.git-credentials",
        "credentials.json",
        "aws/credentials",
        "secrets.yaml",
        "App.KEY",
        ".ENV",
    ],
)
def test_secret_paths_are_recognised_by_basename_or_full_path(path: str) -> None:
    assert is_secret_path(path, DEFAULT_SECRET_PATH_PATTERNS)


@pytest.mark.parametrize(
    "path",
    [
        "src/environment.py",
        "docs/keys.md",
        "keyboard.py",
        "envelope.txt",
        "tokenizer.json",
        "src/secret_sauce.py",
        "README.md",
    ],
)
def test_ordinary_paths_are_not_secret(path: str) -> None:
    assert not is_secret_path(path, DEFAULT_SECRET_PATH_PATTERNS)


def test_a_pattern_with_a_slash_matches_the_whole_relative_path() -> None:
    assert is_secret_path("ops/vault/token.txt", ("ops/vault/*",))
    assert not is_secret_path("src/vault/token.txt", ("ops/vault/*",))


@pytest.mark.parametrize("token", [AWS, OPENAI, ANTHROPIC, GITHUB, GITHUB_PAT, SLACK, JWT])
def test_known_token_shapes_are_redacted(token: str) -> None:
    text, count = redact_secrets(f"value = call({token!r})\n")
    assert token not in text
    assert SECRET_REDACTION in text
    assert count == 1


@pytest.mark.parametrize(
    "line",
    [
        'password = "Tr0ub4dor&3xyz"',
        "DB_PASSWORD='s3cr3t-Passw0rd'",
        'api_key: "a1b2c3d4e5f6g7h8"',
        '"client_secret": "9f8e7d6c5b4a3210"',
        "token: str = 'abc123def456ghi'",
        "SECRET_KEY = 'django-insecure-4k3j2h1g'",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "db_password: hunter2hunter2X",
    ],
)
def test_secret_assignments_have_their_value_redacted(line: str) -> None:
    text, count = redact_secrets(line)
    assert count == 1
    assert SECRET_REDACTION in text
    key = line.split("=", maxsplit=1)[0].split(":", maxsplit=1)[0]
    assert text.startswith(key)  # the key stays visible: the model learns a secret exists


@pytest.mark.parametrize(
    "line",
    [
        "token = get_token()",
        "password = request.form['password']",
        'api_key_env = "OPENAI_API_KEY"',
        'TOKEN_ENV = "LIVE_MEMORY_TOKEN"',
        "tokenizer = 'bert-base-uncased-v2'",
        'password = "changeme"',
        'secret_path = "config/secrets.json"',
        'token = ""',
        "max_tokens = 2048",
        "api_key = os.environ['ANTHROPIC_API_KEY']",
        'password = "${DB_PASSWORD}"',
        "secret_key = settings.secret_key_value",
        "self.token = token_from_header_value",
        "if line.startswith('-----BEGIN RSA PRIVATE KEY-----'):",
        "Using scikit-learn via sk-learn-compatible-wrapper",
        "https://example.com/path:8080@host",
    ],
)
def test_ordinary_code_is_not_redacted(line: str) -> None:
    assert redact_secrets(line) == (line, 0)


def test_url_password_is_redacted_but_user_and_host_stay() -> None:
    text, count = redact_secrets("url = postgres://admin:Pa55word@db.internal:5432/app")
    assert count == 1
    assert text == f"url = postgres://admin:{SECRET_REDACTION}@db.internal:5432/app"


def test_private_key_block_is_redacted_line_by_line_keeping_the_line_count() -> None:
    body = "\n".join(["MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7"] * 3)
    key = f"-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----"
    text = f"before\nKEY = '''{key}'''\nafter\n"
    redacted, count = redact_secrets(text)
    assert count == 1
    assert redacted.count("\n") == text.count("\n")
    assert "MIIEvQ" not in redacted
    lines = redacted.split("\n")
    assert lines[0] == "before"
    assert lines[1] == f"KEY = '''{SECRET_REDACTION}"
    assert lines[-2] == "after"


def test_encrypted_private_key_with_headers_and_blank_line_is_fully_redacted() -> None:
    text = (
        "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0123\n\n"
        "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
        "-----END RSA PRIVATE KEY-----\nnext = 1\n"
    )
    redacted, count = redact_secrets(text)
    assert count == 1
    assert "MIIEow" not in redacted and "DEK-Info" not in redacted
    assert redacted.endswith("next = 1\n")


def test_escaped_private_key_on_one_line_is_redacted() -> None:
    pem = "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBg\\n-----END PRIVATE KEY-----\\n"
    line = f'"private_key": "{pem}"'
    redacted, count = redact_secrets(line)
    assert "MIIEvQ" not in redacted
    assert count >= 1


def test_redaction_counts_every_secret_and_is_idempotent() -> None:
    text = f"a = '{AWS}'\nb = '{GITHUB}'\nc = 1\n"
    once, count = redact_secrets(text)
    assert count == 2
    assert redact_secrets(once) == (once, 0)


# --- the class "secrets that slipped past redaction" (security review, round two) ---------
# Pieces joined at run time so this file does not itself look like it leaks credentials.
_R = "4eC39HqLyjWDarjtT1zdp7dc"
SLIPPED = {
    "npm token after a key word": "NPM_TOKEN: npm_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "stripe test key, env style": "STRIPE_KEY=sk_" + "test_" + _R,
    "identifier-like api key": "api_key: Abcdef_123456_" + "XyZ789abcQ",
    "exported service token": "export SERVICE_TOKEN=" + "Zx8_" + _R,
    "env key with a comment": "SERVICE_AUTH=" + "k9" + _R + "  # rotated monthly",
    "slack webhook": "url = https://hooks.slack.com/services/T0" + "1ABCDEF/B02GHIJKL/" + _R,
    "discord webhook": "https://discord.com/api/webhooks/12345678/" + _R + "abcXYZ",
    "bearer header, hex": "Authorization: Bearer " + "3f9a" * 10,
    "curl bearer": 'curl -H "Authorization: Bearer ' + "ya29." + _R + '" https://x',
    "basic auth header": "Authorization: Basic " + "dXNlcjpwYXNzd29yZDEyMzQ1Ng==",
    "sendgrid key": "SG." + "a" * 11 + "B" * 11 + "." + "c1" * 21 + "d",
    "pypi token": "password = pypi-AgE" + "NdGVzdC5weXBpLm9yZw" + "x" * 50,
    "gitlab deploy token": "gldt-" + _R,
    "azure storage key": "AccountKey=" + "A1b2" * 21 + "Xy==",
}
KEPT = (
    "token = get_token()",
    "secret_key = settings.SECRET_KEY",
    "API_KEY = os.environ['OPENAI_API_KEY']",
    "MAX_TOKENS: int = 4096",
    "PRIMARY_KEY = DEFAULT_PRIMARY_KEY_NAME",
    "password = hashed_pw_2024",
    "CACHE_KEY: cache-key-for-sessions",
    "the server uses Bearer authentication for every request",
    "# a token based scheme, see docs",
    "AUTH_TOKEN=${AUTH_TOKEN}",
    "export GITHUB_TOKEN=$GH_TOKEN",
)


@pytest.mark.parametrize("name", SLIPPED)
def test_secrets_that_slipped_past_redaction_before_are_masked(name: str) -> None:
    line = SLIPPED[name]
    text, count = redact_secrets(f"first line\n{line}\nlast line\n")
    assert count >= 1 and SECRET_REDACTION in text, text
    secretive = [
        part for part in line.replace("=", " ").replace(":", " ").split() if len(part) > 15
    ]
    assert not any(part in text for part in secretive if not part.startswith("http")), text
    assert text.count("\n") == 3  # line numbers still point at the right lines


@pytest.mark.parametrize("line", KEPT)
def test_names_references_and_prose_near_key_words_are_kept(line: str) -> None:
    assert redact_secrets(line) == (line, 0)


def test_a_pem_body_is_masked_to_its_short_last_line() -> None:
    body = ["MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" + "A" * 32] * 3 + ["q8Zs="]
    key = "\n".join(["-----BEGIN PRIVATE KEY-----", *body, "-----END PRIVATE KEY-----"])
    text, _ = redact_secrets(f"x = 1\n{key}\ny = 2\n")
    assert "q8Zs=" not in text and "MIIE" not in text
    assert text.splitlines()[0] == "x = 1" and text.splitlines()[-1] == "y = 2"
    assert text.count("\n") == key.count("\n") + 3


@pytest.mark.parametrize(
    "path",
    [
        ".envrc",
        "db/.pgpass",
        "keys/deploy.ppk",
        "android/release.jks",
        "app.keystore",
        "AuthKey_ABC123.p8",
        "vault.kdbx",
        "infra/terraform.tfstate",
        "infra/terraform.tfstate.backup",
        ".config/gcloud/application_default_credentials.json",
        ".azure/msal_token_cache.json",
        ".aws/credentials",
        ".netrc",
        ".npmrc",
        ".htpasswd",
        ".vault-token",
    ],
)
def test_the_usual_credential_files_are_secret_paths(path: str) -> None:
    assert is_secret_path(path, DEFAULT_SECRET_PATH_PATTERNS)


_QUARTER_MIB = 256 * 1024  # = the largest file content a hook tees to the server


@pytest.mark.parametrize(
    "text",
    [
        "A" * _QUARTER_MIB,
        "xoxb-" + "-" * _QUARTER_MIB,
        "Authorization: Bearer " + "a1" * (_QUARTER_MIB // 2),
        "NPM_TOKEN=" + "_" * _QUARTER_MIB + "\n",
        "SERVICE_" * (_QUARTER_MIB // 8) + "KEY=x",
        "-----BEGIN PRIVATE KEY-----\n" + "QUJD\n" * (_QUARTER_MIB // 5),
        "https://hooks.slack.com/services/" + "T/" * (_QUARTER_MIB // 2),
        "password = '" + "a" * _QUARTER_MIB,
    ],
)
def test_redaction_stays_linear_on_adversarial_input(text: str) -> None:
    started = time.thread_time()  # CPU time of this thread: the work, not the machine's load
    redact_secrets(text)
    assert time.thread_time() - started < 5.0  # generous; backtracking would take minutes
