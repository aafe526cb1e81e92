"""One real `live-memory serve` (and one scripted fake model) shared by the edge tests of
this package: the guard, the HTTP limits and the MCP surface."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.fakes import FakeProvider, Text
from tests.support.repo import make_repo
from tests.support.server_process import ServerProcess

EDGE_FILES = {"src/app.py": "def answer():\n    return 42\n", "README.md": "# demo\n"}


@pytest.fixture(scope="package")
def edge_fake() -> Iterator[FakeProvider]:
    with FakeProvider() as provider:
        yield provider


@pytest.fixture(scope="package")
def edge_server(
    edge_fake: FakeProvider, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerProcess]:
    env = {
        "ANTHROPIC_API_KEY": "dummy-key",
        "ANTHROPIC_BASE_URL": edge_fake.anthropic_base_url,
        "LIVE_MEMORY_REQUEST_TIMEOUT_S": "2",
    }
    with ServerProcess(tmp_path_factory.mktemp("edge"), env) as server:
        yield server


@pytest.fixture
def edge_repo(tmp_path: Path, edge_fake: FakeProvider) -> Path:
    edge_fake.reset()
    edge_fake.responder = lambda recorded: Text("edge answer")
    return make_repo(tmp_path / "repo", EDGE_FILES)
