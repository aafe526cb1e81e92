"""The dashboard lists the stored snapshots: what it finds there must not hang it."""

from __future__ import annotations

import time
from pathlib import Path
from urllib.parse import urlencode

from live_memory.config import constants as C
from live_memory.memory import SnapshotStore
from tests.support.fakes import FakeProvider, Text
from tests.support.fifo import plant_fifo
from tests.support.repo import make_repo
from tests.support.server_process import ServerProcess

PAGE_TIMEOUT_S = 30.0
"""A bound for a loaded machine; a page blocked on a FIFO never answers at all."""


def test_a_fifo_among_the_stored_snapshots_never_hangs_the_dashboard(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"app.py": "A = 1\n"})
    other = make_repo(tmp_path / "other", {"b.py": "B = 1\n"})
    with FakeProvider() as fake:
        fake.responder = lambda recorded: Text("A is 1")
        env = {"ANTHROPIC_API_KEY": "dummy-key", "ANTHROPIC_BASE_URL": fake.anthropic_base_url}
        with ServerProcess(tmp_path / "data", env) as server:
            ask = {"question": "what is A?", "cwd": str(repo)}
            assert server.request("POST", "/api/ask", json=ask).status_code == 200
            store = SnapshotStore(tmp_path / "data" / C.SNAPSHOT_DIR_NAME)
            deadline = time.monotonic() + PAGE_TIMEOUT_S
            while not store.path_for(repo).exists():  # settled off the answer's path
                assert time.monotonic() < deadline, "the answered question left no snapshot"
                time.sleep(0.05)  # no event to wait on from outside the server
            # A FIFO with a snapshot's name, and FIFOs in place of a known workspace's
            # snapshot and of its unsettled copy; no writer ever comes.
            plant_fifo(store.directory / f"planted-0123456789abcdef{C.SNAPSHOT_SUFFIX}")
            plant_fifo(store.path_for(other))
            plant_fifo(store.unsettled_path_for(other))

            page = server.request("GET", "/ui", timeout=PAGE_TIMEOUT_S)
            assert page.status_code == 200
            assert str(repo) in page.text
            where = urlencode({"root": str(other)})
            detail = server.request("GET", f"/ui/workspace?{where}", timeout=PAGE_TIMEOUT_S)
            assert detail.status_code < 500, detail.text
