"""At most `OpenStores.limit` workspace indexes keep a SQLite connection open (each holds
130-175 KB of C heap); the least recently used is parked and answers again on its next use,
and a closed index stays closed."""

from __future__ import annotations

from pathlib import Path

import pytest

from live_memory.index import SymbolIndexes
from live_memory.index.store import SymbolStore
from live_memory.knowledge import KnowledgeError
from tests.support.repo import make_repo


def test_past_the_cap_the_least_recently_used_index_is_parked_and_still_answers(
    tmp_path: Path,
) -> None:
    indexes = SymbolIndexes(tmp_path / "data", cpu_share=1.0)
    indexes.open_stores.limit = 2
    try:
        repos = [
            make_repo(tmp_path / f"repo{i}", {f"pkg/mod{i}.py": f"def func_{i}():\n    pass\n"})
            for i in range(4)
        ]
        opened = [indexes.open(repo, secret_patterns=()) for repo in repos]
        for index in opened:
            assert index.completed.wait(30)
        assert indexes.wait_idle(30)
        assert len(indexes.open_stores) == 2
        parked_before = indexes.open_stores.parked
        assert parked_before >= 2
        for i, index in enumerate(opened):  # every one answers, parked or not
            assert [r.location for r in index.find(f"func_{i}")] == [f"pkg/mod{i}.py:1"]
            assert len(indexes.open_stores) <= 2
        assert indexes.open_stores.parked > parked_before  # re-opening parked the others
        for repo in repos:
            indexes.release(repo)
        assert len(indexes.open_stores) == 0
        with pytest.raises(KnowledgeError, match="closed"):
            opened[0].find("func_0")
    finally:
        indexes.close()


def test_a_parked_store_that_is_closed_stays_closed(tmp_path: Path) -> None:
    store = SymbolStore(tmp_path / "one.sqlite3")
    assert store.file_count() == 0
    store.park()
    assert store.file_count() == 0  # re-opened on use
    store.park()
    store.close()
    with pytest.raises(KnowledgeError, match="closed"):
        store.file_count()
