"""A passivated workspace leaves nothing in memory: no actor handle, no name cache entry.

Anything that keeps a stopped actor's handle alive keeps its mailbox and locks alive, and
scattered survivors pin the allocator pages the actor's objects came from, so 1,000
passivated workspaces would keep costing memory.
"""

from __future__ import annotations

import asyncio
import gc
import json
import subprocess
import sys
import threading
import time
import tracemalloc
import weakref
from collections import Counter
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from live_memory.actors import GetStats, Route
from live_memory.actors.message import RequestPassivation
from live_memory.config import constants as C
from live_memory.config import load_settings
from live_memory.gateway.service import LiveMemoryService

WAIT_S = 10.0


def _workspaces(service: LiveMemoryService) -> list[dict[str, object]]:
    return [a for a in service.actors() if a["kind"] == "workspace"]


def test_a_passivated_workspace_leaves_no_handle_and_no_name_cache_entry(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("VALUE = 1\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(root)], check=True)  # src/ belongs to root
    settings = load_settings({"LIVE_MEMORY_DATA_DIR": str(tmp_path / "data")}, home=tmp_path)
    service = LiveMemoryService(settings)
    try:
        event = {"path": "src/app.py", "kind": "read", "content": "VALUE = 1\n"}
        asyncio.run(service.clear(str(root)))  # a notification alone creates no workspace
        for cwd in (root, root / "src"):  # two names for one workspace, both remembered
            outcome = asyncio.run(service.notify({"cwd": str(cwd), "events": [event]}))
            assert outcome.accepted == 1
        handle: Future[Any] = Future()
        stats: Future[dict[str, object]] = Future()
        service.gateway.tell(Route(str(root), GetStats(stats), handle=handle))
        assert stats.result(timeout=WAIT_S)["workspace"] == str(root)
        workspace = weakref.ref(handle.result(timeout=WAIT_S))
        del handle
        resolved = service.gateway.proxy().resolved
        assert set(resolved.get(timeout=WAIT_S).roots.values()) == {str(root)}

        service.gateway.tell(RequestPassivation(str(root)))
        deadline = time.monotonic() + WAIT_S
        while _workspaces(service) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _workspaces(service)
        assert resolved.get(timeout=WAIT_S).roots == {}
        gc.collect()
        assert workspace() is None, gc.get_referrers(workspace())

        # The names still work: the next request resolves and activates afresh.
        outcome = asyncio.run(service.notify({"cwd": str(root / "src"), "events": [event]}))
        assert outcome.accepted == 1
        assert len(_workspaces(service)) == 1
    finally:
        asyncio.run(service.shutdown())


def test_active_workspaces_hold_little_and_passivated_ones_keep_next_to_nothing(
    tmp_path: Path,
) -> None:
    """What the allocator must keep after 1,000 workspaces were all active at once is bounded
    by what each held while active (bench/workspaces_at_scale.py measures the RSS): Python
    bytes per active workspace, open index databases, and survivors once passivated.

    Measured in a fresh interpreter: tracemalloc and gc see the whole process, and in a suite
    worker the servers and threads of other tests' fixtures allocate meanwhile (a loaded run
    counted 40 MB "per" 40 workspaces)."""
    code = "import sys; from tests.gateway.test_service_passivation import _measure; _measure()"
    probe = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        timeout=WAIT_S * 30,
        check=False,
    )
    assert probe.returncode == 0, probe.stderr[-4000:]
    figures = json.loads(probe.stdout.splitlines()[-1])
    count, active, kept = figures["count"], figures["active"], figures["kept"]
    print(f"per active workspace {active / count:.0f} B, kept {kept / count:.0f} B")
    # Measured 17.5 KB and 1.6-1.9 KB: about 8 KB of the active figure is pykka's documented
    # ThreadingActor (its thread, inbox Queue and stop Event; 9.1 KB on the former worker pool).
    assert active / count < C.WORKSPACE_ACTIVE_PYTHON_BYTES_MAX
    assert kept / count < C.WORKSPACE_PASSIVATED_PYTHON_BYTES_MAX
    assert figures["open_stores"] <= C.INDEX_OPEN_DATABASES_MAX
    # While active, what one ThreadingActor holds and nothing more: its inbox Queue's 3
    # Conditions, its stop Event and its thread's start Event (with a Condition each), 7; once
    # passivated none per workspace (a pending reply Future's Condition may be live meanwhile).
    assert sum(figures["primitives"].values()) < count * 7 + count // 4, figures["primitives"]
    assert sum(figures["kept_primitives"].values()) < count // 4, figures["kept_primitives"]


def _measure() -> None:
    """The figures above, printed as one JSON line (run in its own interpreter)."""
    tmp_path = Path(sys.argv[1])
    count = 40
    assert count + 5 <= C.WORKSPACES_ACTIVE_MAX  # all measured at once, none passivated early
    roots = []
    for i in range(count + 5):
        root = tmp_path / "ws" / f"w{i:03d}"
        (root / "src").mkdir(parents=True)
        (root / "src" / "app.py").write_text(f"VALUE = {i}\n", encoding="utf-8")
        roots.append(str(root))
    warm, measured = roots[:5], roots[5:]
    settings = load_settings({"LIVE_MEMORY_DATA_DIR": str(tmp_path / "data")}, home=tmp_path)
    service = LiveMemoryService(settings)
    symbols = service.stores.symbols
    assert symbols is not None
    event = {"path": "src/app.py", "kind": "read", "content": "VALUE = 1\n"}

    def activate(batch: list[str]) -> None:
        for root in batch:
            asyncio.run(service.clear(root))
            asyncio.run(service.notify({"cwd": root, "events": [event]}))
        assert symbols.wait_idle(WAIT_S * 3)

    def passivate(batch: list[str]) -> None:
        for root in batch:
            service.gateway.tell(RequestPassivation(root))
        deadline = time.monotonic() + WAIT_S * 3
        while _workspaces(service) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _workspaces(service)
        assert symbols.wait_idle(WAIT_S)
        gc.collect()

    tracemalloc.start()
    try:
        activate(warm)  # first-use caches (imports, compiled patterns) are not per workspace
        passivate(warm)
        before = tracemalloc.get_traced_memory()[0]
        primitives = _threading_primitives()
        activate(measured)
        assert len(_workspaces(service)) == count
        gc.collect()
        active = tracemalloc.get_traced_memory()[0] - before
        active_primitives = _threading_primitives() - primitives
        open_stores = len(symbols.open_stores)
        passivate(measured)
        kept = tracemalloc.get_traced_memory()[0] - before
        kept_primitives = _threading_primitives() - primitives
    finally:
        tracemalloc.stop()
        asyncio.run(service.shutdown())
    figures = {"count": count, "active": active, "kept": kept, "open_stores": open_stores}
    primitives_held = {"primitives": active_primitives, "kept_primitives": kept_primitives}
    print(json.dumps(figures | {k: dict(v) for k, v in primitives_held.items()}))


def _threading_primitives() -> Counter[str]:
    """Live Events and Conditions (each ~1 KB with its lock and 64-slot deque)."""
    gc.collect()
    return Counter(
        type(o).__name__
        for o in gc.get_objects()
        if isinstance(o, (threading.Event, threading.Condition))
    )
