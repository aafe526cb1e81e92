"""The workspace index over a real git repository: background pass, incremental updates,
persistence across a restart, the core map and the per-question lookup."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from live_memory.config import constants as C
from live_memory.index import SymbolIndexes, WorkspaceIndex, question_names, render_core_map
from live_memory.index.lookup import lookup_symbols
from live_memory.index.stat_memo import StatMemo
from live_memory.index.store import SymbolRow
from tests.support.linearity import assert_linear
from tests.support.repo import make_repo

SECRETS = (".env", ".env*", "*.pem")

FILES = {
    "app/core.py": 'def load_config(path):\n    """Read the config."""\n    return parse(path)\n',
    "app/parse.py": "def parse(path):\n    return path\n\nclass Parser:\n    pass\n",
    "app/use1.py": "from app.parse import parse\nparse(1)\nParser()\n",
    "app/use2.py": "from app.parse import parse\nparse(2)\n",
    "web/main.ts": "export function renderPage(id: string): string { return parse(id); }\n",
    "srv/main.go": "package main\nfunc ServeHTTP() {}\n",
    "lib/src/lib.rs": "pub fn crunch_numbers() -> u32 { 1 }\n",
    ".env.py": "def leaked_secret(): pass\n",
    "README.md": "# readme\n",
}


@pytest.fixture
def indexes(tmp_path: Path) -> Iterator[SymbolIndexes]:
    symbols = SymbolIndexes(tmp_path / "data", cpu_share=1.0)
    yield symbols
    symbols.close()


def _open(symbols: SymbolIndexes, repo: Path) -> WorkspaceIndex:
    index = symbols.open(repo, secret_patterns=SECRETS)
    assert index.completed.wait(30)
    assert symbols.wait_idle(30)
    return index


def _count_parses(index: WorkspaceIndex) -> list[str]:
    parsed: list[str] = []
    original = index._parse

    def counting(rel: str, *args: object) -> object:
        parsed.append(rel)
        return original(rel, *args)  # type: ignore[arg-type]

    index._parse = counting  # type: ignore[method-assign,assignment]
    return parsed


def test_background_pass_indexes_every_source_file_but_secrets(
    tmp_path: Path, indexes: SymbolIndexes
) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    index = _open(indexes, repo)
    coverage = index.coverage()
    assert coverage.complete and coverage.total == 7 and coverage.indexed == 7
    assert coverage.languages == {"go": 1, "python": 4, "rust": 1, "typescript": 1}
    assert [r.location for r in index.find("load_config")] == ["app/core.py:1"]
    assert index.find("leaked_secret") == []
    assert index.find("parser", kind="class")[0].location == "app/parse.py:4"


def test_incremental_update_and_delete_and_restart_without_reparsing(
    tmp_path: Path, indexes: SymbolIndexes
) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    index = _open(indexes, repo)
    (repo / "app/core.py").write_text("\n\ndef load_config(path, strict=True):\n    pass\n")
    assert index.update(str(repo / "app/core.py"))
    assert not index.update("app/core.py")  # same content hash: nothing to do
    (row,) = index.find("load_config")
    assert (row.line, row.signature) == (3, "def load_config(path, strict=True)")
    assert index.update("app/new.py", b"def teed_only(): pass\n") is False  # not on disk
    (repo / "app/parse.py").unlink()
    assert index.update("app/parse.py")
    assert index.find("Parser") == []
    assert not index.update("../outside.py") and not index.update("/etc/passwd")
    indexes.release(repo)

    again = SymbolIndexes(tmp_path / "data", cpu_share=1.0)
    try:
        reopened = again.open(repo, secret_patterns=SECRETS)
        assert reopened.find("load_config")[0].line == 3  # persisted, before any pass
        parsed = _count_parses(reopened)
        assert reopened.completed.wait(30)
        assert parsed == []  # unchanged size+mtime: no file read or parsed again
    finally:
        again.close()


def test_look_ups_are_remembered_until_the_rows_change(
    tmp_path: Path, indexes: SymbolIndexes, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    index = _open(indexes, repo)
    queries: list[str] = []
    store_find = index.store.find

    def counted(name: str, kind: str | None = None, limit: int = 50) -> list[SymbolRow]:
        queries.append(name)
        return store_find(name, kind, limit)

    monkeypatch.setattr(index.store, "find", counted)
    first = index.find("load_config")
    assert index.find("load_config") == first and index.find("nothing_like_it") == []
    assert index.find("nothing_like_it") == []
    assert queries == ["load_config", "nothing_like_it"]  # asked again: from the memo
    first.clear()  # a caller's list is its own
    assert index.find("load_config")[0].line == 1
    (repo / "app/core.py").write_text("\n\ndef load_config(path, strict=True):\n    pass\n")
    assert index.update(str(repo / "app/core.py"))
    assert index.find("load_config")[0].line == 3  # the edit is seen at once
    assert queries == ["load_config", "nothing_like_it", "load_config"]


def test_core_map_ranks_by_references_within_budget_and_is_deterministic(
    tmp_path: Path, indexes: SymbolIndexes
) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    index = _open(indexes, repo)
    text = render_core_map(index.store, 2_000)
    assert text == render_core_map(index.store, 2_000)
    assert text.startswith("Top level: app/ (python 4)")
    assert "app/parse.py:1 [function] parse: def parse(path)" in text
    small = render_core_map(index.store, 200)
    assert len(small) <= 200
    assert render_core_map(index.store, 0) == ""


def test_question_lookup_finds_the_definition_and_skips_what_the_prompt_holds(
    tmp_path: Path, indexes: SymbolIndexes
) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    index = _open(indexes, repo)
    assert question_names("Where is `load_config` defined and what does the Parser do?")[:2] == [
        "load_config",
        "Parser",
    ]
    hits = lookup_symbols(index, "where is load_config defined?", lambda line: False)
    assert hits.found
    assert hits.lines == (
        "app/core.py:1 [function] load_config: def load_config(path)  — Read the config.",
    )
    held = lookup_symbols(index, "where is load_config defined?", lambda line: True)
    assert held.found and held.lines == ()
    assert not lookup_symbols(index, "how does it work?", lambda line: False).found


def test_question_names_are_linear_and_skip_a_token_longer_than_any_name() -> None:
    assert_linear(question_names)
    assert question_names("x_" * C.MAX_IDENTIFIER_CHARS + " and load_config") == ["load_config"]


def test_the_wal_is_checkpointed_by_the_idle_index_thread_never_inside_an_update(
    tmp_path: Path, indexes: SymbolIndexes
) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    index = _open(indexes, repo)
    with index.store._read() as db:
        assert db.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0  # none in a commit
    before = index.store.writes  # the pass's own writes, fewer than the idle threshold
    for i in range(C.INDEX_WAL_IDLE_CHECKPOINT_WRITES):
        index.update("app/core.py", f"def load_config_{i}(path): pass\n".encode())
    assert index.store.writes == before + C.INDEX_WAL_IDLE_CHECKPOINT_WRITES  # none inside
    assert indexes.submit(index, "app/core.py", b"def load_config(path): pass\n")
    assert indexes.wait_idle(30)
    assert index.store.writes == 0  # the idle thread checkpointed
    for _ in range(C.INDEX_WAL_CHECKPOINT_WRITES):  # a storm with no idle moment: bounded
        index.update("app/core.py", f"def f_{index.store.writes}(): pass\n".encode())
        assert index.store.writes < C.INDEX_WAL_CHECKPOINT_WRITES


def test_a_recheck_finds_a_change_the_finished_pass_had_gone_past(
    tmp_path: Path, indexes: SymbolIndexes
) -> None:
    # The OS watcher's watches come after the pass: an edit in between reached no one.
    repo = make_repo(tmp_path / "repo", FILES)
    index = _open(indexes, repo)
    (repo / "app/parse.py").write_text("def parse_strictly(path):\n    return path\n")
    (repo / "app/added.py").write_text("def brand_new():\n    pass\n")
    assert indexes.wait_idle(30)
    assert index.find("parse_strictly") == [] and index.find("brand_new") == []
    indexes.recheck(index)
    assert indexes.wait_idle(30)
    assert [r.location for r in index.find("parse_strictly")] == ["app/parse.py:1"]
    assert [r.location for r in index.find("brand_new")] == ["app/added.py:1"]
    assert index.find("Parser") == []
    assert index.coverage().complete


def test_a_recheck_of_a_released_index_does_nothing(tmp_path: Path, indexes: SymbolIndexes) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    index = _open(indexes, repo)
    indexes.release(repo)
    indexes.recheck(index)  # its database is closed: no pass may start on it
    assert indexes.wait_idle(30)


def test_work_cut_short_by_a_release_is_not_a_failure(
    tmp_path: Path, indexes: SymbolIndexes, caplog: pytest.LogCaptureFixture
) -> None:
    # Passivation closes the database while the index thread is inside an update for it.
    repo = make_repo(tmp_path / "repo", FILES)
    index = _open(indexes, repo)
    inside, release_done = threading.Event(), threading.Event()
    update = index.update

    def held_update(path: str, content: bytes | None = None) -> bool:
        inside.set()
        assert release_done.wait(30)
        return update(path, content)

    index.update = held_update  # type: ignore[method-assign]
    caplog.set_level(logging.DEBUG, logger="live_memory.index.worker")
    assert indexes.submit(index, "app/core.py", b"def load_config_v2(path):\n    pass\n")
    assert inside.wait(30)
    indexes.release(repo)
    release_done.set()
    assert indexes.wait_idle(30)
    worker = [r for r in caplog.records if r.name == "live_memory.index.worker"]
    assert [r.levelno for r in worker] == [logging.DEBUG]
    assert "passivated" in worker[0].getMessage()
    # The thread goes on, and the next activation's pass finds the change cut short.
    (repo / "app/core.py").write_text("def load_config_v2(path):\n    pass\n")
    again = _open(indexes, repo)
    assert [r.location for r in again.find("load_config_v2")] == ["app/core.py:1"]


def test_a_failing_update_of_an_open_index_is_still_logged_as_one(
    tmp_path: Path, indexes: SymbolIndexes, caplog: pytest.LogCaptureFixture
) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    index = _open(indexes, repo)

    def broken_update(path: str, content: bytes | None = None) -> bool:
        raise OSError("disk gone")

    index.update = broken_update  # type: ignore[method-assign]
    assert indexes.submit(index, "app/core.py", b"x = 1\n")
    assert indexes.wait_idle(30)
    failed = [r for r in caplog.records if r.getMessage() == "symbol index work failed"]
    assert len(failed) == 1 and failed[0].levelno == logging.ERROR


def test_an_unchanged_file_costs_a_stat_and_an_edit_keeping_size_and_mtime_is_seen(
    tmp_path: Path, indexes: SymbolIndexes
) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    index = _open(indexes, repo)
    index.stat_memo = StatMemo(racy_s=0.0)  # trust a stat taken any time after the write
    parsed = _count_parses(index)
    assert not index.update("app/core.py")  # read and hashed: the rows are up to date
    assert not index.update(str(repo / "app/core.py")) and not index.update("app/core.py")
    assert not index.update("app/missing.py") and not index.update("app/missing.py")
    assert parsed == ["app/core.py", "app/missing.py"]  # then the stat alone
    # Same size and mtime (restored), other bytes: the ctime moved, so it is read again.
    path = repo / "app/core.py"
    before = path.stat()
    path.write_text(path.read_text().replace("load_config", "load_cfg_xx"))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size
    assert index.update("app/core.py")
    assert [r.location for r in index.find("load_cfg_xx")] == ["app/core.py:1"]
    # Teed bytes need not be the disk's: the next update from disk reads it again.
    assert index.update("app/core.py", b"def teed_only(): pass\n")
    assert index.update("app/core.py") and index.find("teed_only") == []
    assert parsed.count("app/core.py") == 4


def test_a_file_read_soon_after_its_last_write_is_read_again(
    tmp_path: Path, indexes: SymbolIndexes
) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    index = _open(indexes, repo)
    index.stat_memo = StatMemo(racy_s=3600.0)  # every file here was written within the window
    parsed = _count_parses(index)
    for _ in range(3):
        assert not index.update("app/core.py")
    assert parsed == ["app/core.py"] * 3  # a same-tick write would not show in its stat
    assert len(index.stat_memo) == 0


def test_updates_waiting_for_one_file_collapse_into_the_newest(
    tmp_path: Path, indexes: SymbolIndexes
) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    index = _open(indexes, repo)
    parsed = _count_parses(index)
    count = C.INDEX_QUEUE_MAX + 10
    with indexes._cond:  # the index thread takes no job while this (reentrant) lock is held
        for i in range(count):
            code = f"def version_{i}():\n    pass\n".encode()
            assert indexes.submit(index, "app/core.py", code)  # one waiting job: none dropped
        assert indexes.submit(index, "app/parse.py")  # another file keeps its own place
    assert indexes.wait_idle(30)
    assert indexes.dropped_updates == 0
    assert parsed == ["app/core.py", "app/parse.py"]
    assert [r.location for r in index.find(f"version_{count - 1}")] == ["app/core.py:1"]
    assert index.find("version_0") == [] and index.find("load_config") == []


def test_teed_bytes_waiting_for_the_index_thread_are_capped(
    tmp_path: Path, indexes: SymbolIndexes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A flood of distinct teed files outruns the index thread: the bytes waiting for it are
    capped (past the cap an update waits without them), and the files still get indexed,
    read from disk."""
    cap = 64 * 1024
    monkeypatch.setattr(C, "INDEX_QUEUE_MAX_CONTENT_BYTES", cap)
    repo = make_repo(tmp_path / "repo", FILES)
    index = _open(indexes, repo)
    entered, release = threading.Event(), threading.Event()
    original = index.update

    def held(path: str, content: bytes | None = None) -> bool:
        entered.set()
        assert release.wait(30)
        return original(path, content)

    index.update = held  # type: ignore[method-assign]
    indexes.submit(index, "app/core.py")
    assert entered.wait(30)  # the thread is busy: what follows waits in the queue
    for i in range(40):
        text = "".join(f"def flood_{i}_{n}():\n    return {n}\n" for n in range(600))
        (repo / f"app/flood_{i}.py").write_text(text, encoding="utf-8")
        indexes.submit(index, f"app/flood_{i}.py", text.encode("utf-8"))
        assert indexes.queued_content_bytes <= cap
    release.set()
    assert indexes.wait_idle(30)
    assert indexes.queued_content_bytes == 0
    assert [r.location for r in index.find("flood_39_0")] == ["app/flood_39.py:1"]
