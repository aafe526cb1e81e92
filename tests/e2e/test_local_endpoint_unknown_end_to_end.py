"""A local server that says nothing about itself (llama-cpp-python's server) end to end over
MCP: the missing context size and cache figures are reported as unknown, never assumed.

Its own module (own app and fake) so each module's servers end with it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from live_memory.config import constants as C
from tests.e2e.test_local_endpoint_end_to_end import _ask, _probed, _serve, _trailer
from tests.support import loopback
from tests.support.app_server import AppServer
from tests.support.fakes import FakeLocalServer

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def llama_cpp_python(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[FakeLocalServer, AppServer, Path]]:
    yield from _serve("llama-cpp-python", tmp_path_factory.mktemp("llama-cpp-python"))


def test_a_server_that_says_nothing_is_reported_not_assumed(
    llama_cpp_python: tuple[FakeLocalServer, AppServer, Path],
) -> None:
    _fake, server, repo = llama_cpp_python
    endpoint = _probed(server)
    assert endpoint["probe"]["status"] == "nothing_found"
    assert endpoint["context_tokens"] == C.FALLBACK_CONTEXT_TOKENS
    assert "LIVE_MEMORY_MAX_CONTEXT_TOKENS" in endpoint["problem"]
    health = server.request("GET", "/health").json()
    assert health["endpoint"]["problem"] == endpoint["problem"]
    trailer = _trailer(_ask(server, repo))
    assert " cache=unknown" in trailer, trailer  # llama-cpp-python reports no cached tokens
    stats = server.request("GET", "/stats", params={"cwd": str(repo)}).json()
    assert stats["cache_hit_ratio"] == "unknown"
    assert "assumed" in stats["context"]["source"]
    text = loopback.get(
        f"{server.url}/stats", params={"cwd": str(repo), "format": "text"}, timeout=30
    ).text
    assert "unknown" in text
