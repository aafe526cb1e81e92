"""Feeding the structural index from the workspace actor: a file teed again with the bytes
the index already has costs no update, and every update from disk makes the next teed
bytes go to the index again (on a real index thread and SQLite store)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from live_memory.actors.symbol_shell import TeedMemo, index_events, index_paths
from live_memory.agent import Services, Stores, build_services
from live_memory.config import constants as C
from live_memory.config import load_settings
from live_memory.index import SymbolIndexes, WorkspaceIndex
from live_memory.knowledge import TranscriptQueue, UsageLedger
from live_memory.workspace import FileEvent
from tests.support.repo import make_repo

WAIT_S = 20.0


def test_the_memo_remembers_the_last_bytes_per_file_under_one_spelling() -> None:
    memo = TeedMemo("/repo")
    assert memo.fresh("/repo/src/a.py", "A = 1\n")
    assert not memo.fresh("/repo/src/a.py", "A = 1\n")
    assert not memo.fresh("src/./a.py", "A = 1\n")  # the tools' spelling of the same file
    assert memo.fresh("src/a.py", "A = 2\n")
    assert not memo.fresh("/repo/src/a.py", "A = 2\n")
    memo.forget("src/a.py")
    assert memo.fresh("/repo/src/a.py", "A = 2\n")
    memo.forget()
    assert memo.fresh("/repo/src/a.py", "A = 2\n")


def test_the_memo_holds_at_most_its_cap_oldest_forgotten_first() -> None:
    memo = TeedMemo("/repo")
    for i in range(C.INDEX_TEED_MEMO_MAX + 1):
        assert memo.fresh(f"f{i}.py", "X = 1\n")
    assert memo.fresh("f0.py", "X = 1\n")  # the oldest went
    assert not memo.fresh(f"f{C.INDEX_TEED_MEMO_MAX}.py", "X = 1\n")


@pytest.fixture
def indexed(tmp_path: Path) -> Iterator[tuple[Services, WorkspaceIndex, SymbolIndexes]]:
    root = make_repo(tmp_path / "repo", {"src/app.py": "def first():\n    return 1\n"})
    data = tmp_path / "data"
    settings = load_settings({"LIVE_MEMORY_DATA_DIR": str(data)}, home=tmp_path)
    symbols = SymbolIndexes(data)
    stores = Stores(
        UsageLedger(data / "usage.sqlite3"), TranscriptQueue(data / "q.db"), symbols=symbols
    )
    index = symbols.open(root, secret_patterns=())
    assert symbols.wait_idle(WAIT_S)
    try:
        yield build_services(settings, stores), index, symbols
    finally:
        symbols.release(index.root)
        symbols.close()


def _names(index: WorkspaceIndex) -> set[str]:
    rows, _, _ = index.store.outline("src/app.py")
    return {row.name for row in rows}


def test_bytes_teed_again_after_the_file_changed_on_disk_reach_the_index(
    indexed: tuple[Services, WorkspaceIndex, SymbolIndexes],
) -> None:
    services, index, symbols = indexed
    memo = TeedMemo(str(index.root))
    path = str(index.root / "src" / "app.py")
    teed = "def teed():\n    return 2\n"

    def on_disk(text: str, event: FileEvent | None, *, read_by_a_tool: bool = False) -> set[str]:
        """Write `text` to the file, feed the index as the actor would, return its names."""
        (index.root / "src" / "app.py").write_text(text)
        if event is not None:
            index_events(services, index, [event], memo)
        if read_by_a_tool:
            index_paths(services, index, ["src/app.py"], memo)
        assert symbols.wait_idle(WAIT_S)
        return _names(index)

    assert on_disk(teed, FileEvent(path, "read", teed)) == {"teed"}
    assert not memo.fresh(path, teed)  # the same bytes again: nothing to hand over
    # The file moves on on disk and a tool reads it: the index has the disk's bytes now.
    assert on_disk("def moved():\n    return 3\n", None, read_by_a_tool=True) == {"moved"}
    # Reverted and teed again: the memo forgot the path, so the index follows.
    assert on_disk(teed, FileEvent(path, "read", teed)) == {"teed"}
    # A change event without content (a watcher, FileChanged) also re-reads from disk.
    assert on_disk("def changed():\n    return 4\n", FileEvent(path, "change")) == {"changed"}
    assert on_disk(teed, FileEvent(path, "read", teed)) == {"teed"}
