"""`/api/import` at scale on the shared edge server: a full-size import answers quickly (the
duplicate check is indexed, the workspace is not blocked for long: bounded by the server's CPU
seconds, which a loaded machine does not inflate as it does the wall time), an import over
LIVE_MEMORY_MAX_IMPORT_FACTS is a 413 naming it, and the ledger stops at
LIVE_MEMORY_MAX_LEDGER_FACTS and says so."""

from __future__ import annotations

import os
import random
from pathlib import Path

import httpx

from live_memory.config import constants as C
from tests.support import loopback
from tests.support.server_process import ServerProcess


def _facts(count: int, seed: int) -> list[dict[str, object]]:
    rng = random.Random(seed)
    return [
        {"text": " ".join(["module", "calls", *(f"{rng.getrandbits(40):x}" for _ in range(8))])}
        for _ in range(count)
    ]


def _cpu_s(pid: int) -> float:
    """User plus system CPU seconds the process has used so far (/proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _import(server: ServerProcess, repo: Path, facts: list[dict[str, object]]) -> httpx.Response:
    body = {"cwd": str(repo), "facts": facts}
    return loopback.post(f"{server.url}/api/import", json=body, timeout=120)


def test_a_full_import_is_quick_and_the_ledger_and_import_caps_hold(
    edge_server: ServerProcess, edge_repo: Path
) -> None:
    over = _import(edge_server, edge_repo, _facts(C.MAX_IMPORT_FACTS + 1, 1))
    assert over.status_code == 413, over.text
    assert "LIVE_MEMORY_MAX_IMPORT_FACTS" in over.json()["error"]

    assert edge_server.proc is not None
    pid = edge_server.proc.pid
    before = _cpu_s(pid)
    full = _import(edge_server, edge_repo, _facts(C.MAX_LEDGER_FACTS, 2))
    spent = _cpu_s(pid) - before
    assert full.status_code == 200, full.text
    assert full.json()["added"] == C.MAX_LEDGER_FACTS
    # The server's CPU for the whole request (parse, redaction, the indexed duplicate check,
    # the merge); the pairwise check took ~25 s for 3,000 facts.
    print(f"import of {C.MAX_LEDGER_FACTS} facts: {spent:.2f} s of server CPU")
    assert spent < 5.0, spent  # measured 0.8 s
    stats = loopback.get(f"{edge_server.url}/stats", params={"cwd": str(edge_repo)}, timeout=30)
    assert stats.status_code == 200  # the workspace answers again at once

    more = _import(edge_server, edge_repo, _facts(10, 3))
    assert more.status_code == 200, more.text
    assert more.json()["added"] == 0
    assert more.json()["ledger_facts"] == C.MAX_LEDGER_FACTS
    assert "LIVE_MEMORY_MAX_LEDGER_FACTS" in str(more.json()["ledger_full"])
