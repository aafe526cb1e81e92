"""A large import's store merge runs off the workspace actor: while it is under way (held at
its first transaction by a gate on the real store, so "under way" is an event, not a guess),
/notify, /stats and a question are answered; then the window learns the facts in one step and
the import gets its reply. A wipe that lands while the merge runs wins."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from live_memory.config import constants as C
from live_memory.knowledge import FactStore
from tests.e2e.conftest import ensure_workspace, provider_env
from tests.support import loopback
from tests.support.app_server import AppServer
from tests.support.fakes import FakeProvider, Text
from tests.support.repo import make_repo

WAIT_S = 60.0  # an upper bound for a loaded machine; every wait ends on its event
ANSWERED_S = 20.0  # a reply the actor would hold back for the whole merge never comes


def _facts(count: int) -> list[dict[str, object]]:
    rng = random.Random(17)
    return [
        {"text": f"Function handle_{i:04d} in src/m{i:04d}.py calls {rng.getrandbits(40):x}."}
        for i in range(count)
    ]


class Gate:
    """Holds the store's next merge (the import's first chunk) until released."""

    def __init__(self, store: FactStore) -> None:
        self.started, self.release = threading.Event(), threading.Event()
        self.threads: list[str] = []
        real: Callable[..., Any] = store.merge

        def gated(root: str, facts: Any) -> Any:
            self.threads.append(threading.current_thread().name)
            self.started.set()
            assert self.release.wait(WAIT_S)
            return real(root, facts)

        store.merge = gated  # type: ignore[method-assign]


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeProvider]:
    with FakeProvider() as provider:
        yield provider


@pytest.fixture(scope="module")
def server(fake: FakeProvider, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppServer]:
    data = tmp_path_factory.mktemp("import") / "data"
    with AppServer(data, provider_env(fake, "anthropic")) as running:
        yield running


@pytest.fixture
def running(server: AppServer, tmp_path: Path) -> Iterator[tuple[AppServer, Path, FactStore]]:
    """A fresh workspace on the module's server, and its real fact store, gated per test."""
    repo = make_repo(tmp_path / "repo", {"src/app.py": "def answer():\n    return 42\n"})
    ensure_workspace(server.url, repo)
    assert server._server is not None
    store = server._server._app.state.service.stores.facts
    assert isinstance(store, FactStore)
    real = store.merge
    yield server, repo, store
    store.merge = real  # type: ignore[method-assign]


def _import(pool: ThreadPoolExecutor, server: AppServer, repo: Path) -> Future[httpx.Response]:
    body = {"cwd": str(repo), "facts": _facts(C.MAX_IMPORT_FACTS)}
    return pool.submit(httpx.post, f"{server.url}/api/import", json=body, timeout=WAIT_S * 2)


def test_questions_and_notify_are_answered_while_a_large_import_merges(
    running: tuple[AppServer, Path, FactStore], fake: FakeProvider
) -> None:
    server, repo, store = running
    gate = Gate(store)
    fake.script(Text("It returns 42."), Text("handle_1234 calls a helper."))
    with ThreadPoolExecutor(1) as pool:
        imported = _import(pool, server, repo)
        assert gate.started.wait(WAIT_S)  # the merge is under way
        event = {"path": "src/app.py", "kind": "read", "content": "def answer():\n    return 42\n"}
        notify = loopback.post(
            f"{server.url}/notify", json={"cwd": str(repo), "events": [event]}, timeout=ANSWERED_S
        )
        assert notify.json() == {"accepted": 1, "ignored": 0}
        stats = loopback.get(f"{server.url}/stats", params={"cwd": str(repo)}, timeout=ANSWERED_S)
        assert stats.status_code == 200
        asked = loopback.post(
            f"{server.url}/api/ask",
            json={"question": "What does answer() return?", "cwd": str(repo)},
            timeout=ANSWERED_S,
        )
        assert asked.status_code == 200 and asked.json()["answer"] == "It returns 42.", asked.text
        assert not imported.done()  # all of that while the import still waited on its merge
        gate.release.set()
        reply = imported.result(WAIT_S * 2)
    assert reply.status_code == 200, reply.text
    assert reply.json()["stored"]["added"] == C.MAX_IMPORT_FACTS
    assert reply.json()["added"] == C.MAX_IMPORT_FACTS  # the window learnt them in one step
    assert all("workspace" not in name.lower() for name in gate.threads), gate.threads
    # Merged in chunks: each chunk is its own transaction, so the lock is released between.
    assert len(gate.threads) == -(-C.MAX_IMPORT_FACTS // C.FACT_MERGE_CHUNK_FACTS)
    stats = server.request("GET", "/stats", params={"cwd": str(repo)}).json()
    assert stats["knowledge"]["store"]["current"] == C.MAX_IMPORT_FACTS
    asked = server.request(
        "POST", "/api/ask", json={"question": "What does handle_1234 call?", "cwd": str(repo)}
    )
    assert asked.status_code == 200, asked.text
    assert "handle_1234 in src/m1234.py" in str(fake.requests[-1].body)


def test_a_wipe_while_the_import_merges_wins(running: tuple[AppServer, Path, FactStore]) -> None:
    server, repo, store = running
    gate = Gate(store)
    with ThreadPoolExecutor(1) as pool:
        imported = _import(pool, server, repo)
        assert gate.started.wait(WAIT_S)
        cleared = loopback.post(f"{server.url}/clear", json={"cwd": str(repo)}, timeout=ANSWERED_S)
        assert cleared.status_code == 200, cleared.text
        gate.release.set()
        reply = imported.result(WAIT_S * 2)
    assert reply.status_code == 200, reply.text
    assert reply.json()["added"] == 0 and "cleared" in reply.json()["dropped"]
    stats = server.request("GET", "/stats", params={"cwd": str(repo)}).json()
    assert stats["knowledge"]["store"]["stored"] == 0
    assert stats["ledger_facts"] == 0
