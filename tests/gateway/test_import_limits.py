"""`/api/import` at scale on the shared edge server: a full-size import answers quickly (the
duplicate check is indexed, the workspace is not blocked for long), an import over
LIVE_MEMORY_MAX_IMPORT_FACTS is a 413 naming it, and the ledger stops at
LIVE_MEMORY_MAX_LEDGER_FACTS and says so."""

from __future__ import annotations

import random
import time
from pathlib import Path

import httpx

from live_memory.config import constants as C
from tests.support.server_process import ServerProcess


def _facts(count: int, seed: int) -> list[dict[str, object]]:
    rng = random.Random(seed)
    return [
        {"text": " ".join(["module", "calls", *(f"{rng.getrandbits(40):x}" for _ in range(8))])}
        for _ in range(count)
    ]


def _import(server: ServerProcess, repo: Path, facts: list[dict[str, object]]) -> httpx.Response:
    body = {"cwd": str(repo), "facts": facts}
    return httpx.post(f"{server.url}/api/import", json=body, timeout=120)


def test_a_full_import_is_quick_and_the_ledger_and_import_caps_hold(
    edge_server: ServerProcess, edge_repo: Path
) -> None:
    over = _import(edge_server, edge_repo, _facts(C.MAX_IMPORT_FACTS + 1, 1))
    assert over.status_code == 413, over.text
    assert "LIVE_MEMORY_MAX_IMPORT_FACTS" in over.json()["error"]

    started = time.monotonic()
    full = _import(edge_server, edge_repo, _facts(C.MAX_LEDGER_FACTS, 2))
    elapsed = time.monotonic() - started
    assert full.status_code == 200, full.text
    assert full.json()["added"] == C.MAX_LEDGER_FACTS
    assert elapsed < 15.0, elapsed  # generous (loaded machine); pairwise was ~25 s for 3,000
    stats = httpx.get(f"{edge_server.url}/stats", params={"cwd": str(edge_repo)}, timeout=30)
    assert stats.status_code == 200  # the workspace answers again at once

    more = _import(edge_server, edge_repo, _facts(10, 3))
    assert more.status_code == 200, more.text
    assert more.json()["added"] == 0
    assert more.json()["ledger_facts"] == C.MAX_LEDGER_FACTS
    assert "LIVE_MEMORY_MAX_LEDGER_FACTS" in str(more.json()["ledger_full"])
