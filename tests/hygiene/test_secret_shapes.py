"""Security round three: 25 shapes of secret that reached the model, each kept from every
egress (Read, Grep's lines, counts and file lists, git_search patches, teed /notify content,
imported facts), and Grep's prefix oracle closed: matching runs on the text Read shows."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from live_memory.config.constants import DEFAULT_SECRET_PATH_PATTERNS, SECRET_REDACTION
from live_memory.gateway.bodies import import_body
from live_memory.hygiene import is_secret_path, redact_secrets
from live_memory.memory.ingest import Ingestor
from live_memory.memory.window import Window
from live_memory.tools import Toolbox
from tests.support.repo import make_repo

# Pieces joined at run time so this file does not itself look like it leaks credentials.
_PW = "Xk9mP2vL" + "8qR4tZ7w"
_HEX = "0e1d2b3a" + "4f5e6d7c" * 15
_B64 = "aB3+dE5/" + "gH7xYz1Q9kLmN0pR2sT4uV6wX8yZaBcDeFgH012="
_AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
_PUTTY = "AAAAIGh1bnRlcjJodW50" + "ZXIyaHVudGVyMmh1bnRlcjI"
_SAS = "aB3%2BdE5%2FgH7xYz1Q" + "9kLmN0pR2sT4uV6wX8yZ%3D"

# (the text, the secret in it): by class, as the attacker's report lists them.
TEXT_SHAPES: dict[str, tuple[str, str]] = {
    # assignments whose key word the rules' anchoring missed
    "env name with a key word inside": (f"DB_PASSWORD_PROD={_PW}", _PW),
    "env prefix on a command": (f"PGPASSWORD={_PW} pg_dump -h db app", _PW),
    "php define call": (f"define('DB_PASSWORD', '{_PW}');", _PW),
    "quoted jdbc url parameter": (
        f'url = "jdbc:mysql://db:3306/app?user=app&password={_PW}&ssl=true"',
        _PW,
    ),
    "api key header in a quoted curl": (
        f'curl -H "X-API-Key: {_PW}" https://api.example.com/v1',
        _PW,
    ),
    "yaml secret_key_base": (f"  secret_key_base: {_HEX}", _HEX),
    "azure SharedAccessKey in a connection string": (
        f'conn = "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;'
        f'SharedAccessKey={_B64};EntityPath=orders"',
        _B64[:20],
    ),
    "mysql -p on a command line": (f"mysql -u root -p{_PW} app", _PW),
    "redis url with an empty user": (f"REDIS_URL=redis://:{_PW}@cache:6379/0", _PW),
    "url password with a slash": ("db = postgres://app:Xk9/mP2v" + "L8qR@db/app", "Xk9/mP2v"),
    # token shapes the rules lacked
    "kubeconfig client-key-data": (
        "    client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFb3dJQkFB",
        "UFJJVkFURSBLRVktLS0tLQpNSUlF",
    ),
    "docker config auth": ('      "auth": "dXNlcjpYazlt' + 'UDJ2TDhxUjR0Wjd3"', "UDJ2TDhxUjR0Wjd3"),
    "google oauth client secret": (
        'oauth = ["1234.apps.googleusercontent.com", "GOCSPX-' + '1a2B3c4D5e6F7g8H9i0J1k2L3m"]',
        "1a2B3c4D5e6F7g8H",
    ),
    "slack config refresh token": ("xoxe-1-My0xLTExNjI4" + "MDY5NzYtMTI4NDE5NTk", "MDY5NzYtMTI4"),
    "jwt with a spaced json payload": (
        "t = eyJhbGciOiAiSFMyNTYifQ.eyAic3ViIjogIjEyMzQ1Njc4OTAiIH0."
        + "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "dozjgNryP4J3jVmNHl0w5N",
    ),
    "aws secret in an iam credentials csv row": (
        "User name,Password,Access key ID,Secret access key\n"
        f"alice,,AKIA{'IOSFODNN7EXAMPLE'},{_AWS_SECRET}",
        _AWS_SECRET[:20],
    ),
    "putty private lines outside a ppk": (
        "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: deploy\n"
        "Public-Lines: 2\nAAAAC3NzaC1lZDI1NTE5AAAAIOd7dbz\nAAAAB3Nza\n"
        f"Private-Lines: 1\n{_PUTTY}\nPrivate-MAC: 6b3f0c3e9d1a2b4c",
        _PUTTY[:20],
    ),
    "azure sas sig parameter": (
        "https://acct.blob.core.windows.net/c/b?sv=2022-11-02&sp=r&se=2030-01-01&sig=" + _SAS,
        _SAS[:16],
    ),
}
_PLAIN = "plain-value-" + "hunter2hunter2"  # no rule would mask it: only the path keeps it
PATH_SHAPES = (
    "config/prod.env",
    ".env-prod",
    ".flaskenv",
    "infra/terraform.tfvars",
    "ops/credentials.csv",
    ".docker/config.json",
)
QUOTED_HEADER_PATH = "conf\tig/.env"  # git writes `diff --git "a/conf\tig/.env" …`


def _slug(name: str) -> str:
    return "shapes/" + re.sub(r"\W+", "_", name) + ".txt"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    files = {_slug(name): f"{text}\nTODO end\n" for name, (text, _) in TEXT_SHAPES.items()}
    files |= {path: f"value {_PLAIN}\n" for path in (*PATH_SHAPES, QUOTED_HEADER_PATH)}
    files["README.md"] = "TODO readme\n"
    return make_repo(tmp_path_factory.mktemp("shapes") / "repo", files)


@pytest.fixture(scope="module")
def patches(repo: Path) -> str:
    return Toolbox(repo).run("git_search", {"patch": True}).text


def test_the_25_shapes_are_25() -> None:
    assert len(TEXT_SHAPES) + len(PATH_SHAPES) + 1 == 25


@pytest.mark.parametrize("name", TEXT_SHAPES)
def test_secret_shapes_are_redacted_at_every_egress(repo: Path, patches: str, name: str) -> None:
    text, secret = TEXT_SHAPES[name]
    rel = _slug(name)
    redacted, count = redact_secrets(text)
    assert secret not in redacted and count >= 1, redacted
    read = Toolbox(repo).run("Read", {"file_path": rel}).text
    assert secret not in read and SECRET_REDACTION in read
    for engine in (True, False):  # ripgrep, then the Python fallback
        toolbox = Toolbox(repo, use_ripgrep=engine)
        shown = toolbox.run("Grep", {"pattern": ".", "path": rel, "output_mode": "content"})
        assert secret not in shown.text and "TODO end" in shown.text
    assert secret not in patches
    window = Window(str(repo))
    window.freeze()
    assert Ingestor(repo).apply(window, str(repo / rel), "read", text + "\n")
    held = window.files[rel].content
    assert held is not None and secret not in held
    _, facts = import_body({"facts": [{"text": f"The deploy notes say: {text}"}]}, 10)
    assert secret not in facts[0].text


@pytest.mark.parametrize("path", [*PATH_SHAPES, QUOTED_HEADER_PATH])
def test_secret_files_by_name_are_withheld_at_every_egress(
    repo: Path, patches: str, path: str
) -> None:
    assert is_secret_path(path, DEFAULT_SECRET_PATH_PATTERNS)
    toolbox = Toolbox(repo)
    assert toolbox.run("Read", {"file_path": path}).is_error
    assert toolbox.run("Grep", {"pattern": "hunter2"}).text.startswith("No matches")
    assert _PLAIN not in patches
    window = Window(str(repo))
    window.freeze()
    Ingestor(repo).apply(window, str(repo / path), "read", f"value {_PLAIN}\n")
    assert window.files.get(path) is None or window.files[path].content is None


def test_a_secret_file_whose_name_git_quotes_has_its_diff_withheld(patches: str) -> None:
    assert 'diff --git "a/conf\\tig/.env" "b/conf\\tig/.env"\n[diff of a secret file' in patches
    assert "value plain" not in patches


@pytest.mark.parametrize("engine", [True, False], ids=["rg", "python"])
def test_guessing_a_keys_prefixes_with_grep_learns_nothing(tmp_path: Path, engine: bool) -> None:
    """The one-bit oracle: "Found 1 file" for the right next character and none for a wrong
    one. Matching runs on the text Read shows, so every guess gets the same answer in every
    mode, alone or hidden beside a broad alternative that matches elsewhere."""
    key = "AKIA" + "Q7MZ3XKP2WLN5RTV"
    files = {"conf/settings.py": f'AWS_ACCESS_KEY_ID = "{key}"\nTODO = 1\n', "b.py": "TODO\n"}
    toolbox = Toolbox(make_repo(tmp_path / "oracle", files), use_ripgrep=engine)
    answers: set[str] = set()
    for size in range(4, len(key)):
        right, wrong = key[:size], key[: size - 1] + ("X" if key[size - 1] != "X" else "Y")
        for guess in (right, wrong):
            for mode in ("files_with_matches", "count", "content"):
                alone = toolbox.run("Grep", {"pattern": guess, "output_mode": mode}).text
                assert alone.startswith("No matches"), alone
                beside = {"pattern": f"{guess}|TODO", "output_mode": mode, "-i": False}
                answers.add(f"{mode}: " + toolbox.run("Grep", beside).text)
    assert len(answers) == 3, answers  # one answer per mode, whatever the guess
    assert "conf/settings.py:2" in "".join(answers) and key[4:] not in "".join(answers)


@pytest.mark.parametrize(
    "line",
    [
        "password_field = forms.CharField()",
        "def get_password(self):",
        'if password == "":',
        "TOKEN_URL=https://auth.example.com/oauth2/token",
        "PASSWORD_MIN_LENGTH=12",
        "GITHUB_TOKEN_FILE=/run/secrets/gh_token_2",
        'auth: "oauth2-pkce"',
        "def login(username: str, password: SecretStr) -> Token:",
        "def write_credential(path: Path, credential: OAuthCredential) -> None:",
        "mysql -u root -p app",
        "mkdir -p build/out2",
        "KEYBOARD_LAYOUT=us-intl-2024",
        "SharedAccessKeyName=RootManageSharedAccessKey",
        "https://host:8080/path/with@sign",
        "client-certificate-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUM=",
        "`credentials*`, `.netrc`, `secrets.*`, `.envrc`",
    ],
)
def test_ordinary_code_near_the_new_key_forms_stays_readable(line: str) -> None:
    assert redact_secrets(line) == (line, 0)
