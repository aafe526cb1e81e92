"""Fixtures for end-to-end tests: a fake provider, a real repo, a real server subprocess."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import loopback
from tests.support.fakes import FakeProvider
from tests.support.repo import make_repo

REPO_FILES = {
    "src/app.py": "def answer():\n    return 42\n",
    "src/util/strings.py": "def shout(text):\n    return text.upper()\n",
    "README.md": "# demo\nA tiny project.\n",
}


@pytest.fixture
def fake() -> Iterator[FakeProvider]:
    with FakeProvider() as provider:
        yield provider


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", REPO_FILES)


def provider_env(fake: FakeProvider, wire: str) -> dict[str, str]:
    if wire == "anthropic":
        return {"ANTHROPIC_API_KEY": "dummy-key", "ANTHROPIC_BASE_URL": fake.anthropic_base_url}
    return {
        "LIVE_MEMORY_PROVIDER": "openai",
        "OPENAI_API_KEY": "dummy-key",
        "OPENAI_BASE_URL": fake.openai_base_url,
        "LIVE_MEMORY_MODEL": "gpt-5-mini",
    }


def ensure_workspace(url: str, repo: Path) -> None:
    """Create the workspace if the server has none for `repo` (a notification alone creates
    nothing; an import does, without a model call: an empty one changes nothing, where a
    clear would also drop the symbol index until the first question). Leaves an existing
    one untouched."""
    stats = loopback.get(f"{url}/stats", params={"cwd": str(repo)}, timeout=30)
    if stats.status_code == 404:
        body = {"cwd": str(repo), "facts": []}
        loopback.post(f"{url}/api/import", json=body, timeout=30).raise_for_status()
