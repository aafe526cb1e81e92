"""find_symbol and outline through the Toolbox: real index, jail and scope rules."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from live_memory.index import SymbolIndexes, WorkspaceIndex
from live_memory.tools import Toolbox
from tests.support.repo import make_repo

FILES = {
    "svc/store.py": (
        'import sqlite3\n\nclass Store:\n    """Keeps rows."""\n'
        "    def put(self, key, value):\n        pass\n\n"
        "def open_store(path):\n    return Store()\n"
    ),
    "svc/token.py": 'def connect(api_key="sk-live-0123456789abcdefABCDEF0123456789"):\n    pass\n',
    "notes.md": "# notes\n",
}


@pytest.fixture
def indexed(tmp_path: Path) -> Iterator[tuple[Path, WorkspaceIndex]]:
    repo = make_repo(tmp_path / "repo", FILES)
    symbols = SymbolIndexes(tmp_path / "data", cpu_share=1.0)
    index = symbols.open(repo, secret_patterns=(".env", "*.pem"))
    assert index.completed.wait(30)
    yield repo, index
    symbols.close()


def test_find_symbol_gives_path_line_kind_signature_and_doc(
    indexed: tuple[Path, WorkspaceIndex],
) -> None:
    repo, index = indexed
    toolbox = Toolbox(repo, symbols=index)
    outcome = toolbox.run("find_symbol", {"name": "store"})
    assert not outcome.is_error
    assert outcome.text == "svc/store.py:3 [class] Store: class Store  — Keeps rows."
    method = toolbox.run("find_symbol", {"name": "Store.put", "kind": "method"}).text
    assert method == "svc/store.py:5 [method] Store.put: def put(self, key, value)"
    missing = toolbox.run("find_symbol", {"name": "nothing_here"})
    assert not missing.is_error and "No definition named 'nothing_here'" in missing.text
    assert "index complete: 2 of 2 source files" in missing.text
    bad = toolbox.run("find_symbol", {"name": "x", "kind": "banana"})
    assert bad.is_error and "kind" in bad.text
    assert toolbox.run("find_symbol", {}).is_error


def test_outline_lists_imports_and_definitions_and_never_secrets(
    indexed: tuple[Path, WorkspaceIndex],
) -> None:
    repo, index = indexed
    toolbox = Toolbox(repo, symbols=index)
    text = toolbox.run("outline", {"path": "svc/store.py"}).text
    assert text.splitlines() == [
        "imports: sqlite3",
        "3 [class] Store: class Store  — Keeps rows.",
        "5 [method] Store.put: def put(self, key, value)",
        "8 [function] open_store: def open_store(path)",
    ]
    assert toolbox.run("outline", {"path": str(repo / "svc/store.py")}).text == text
    secret = toolbox.run("outline", {"path": "svc/token.py"}).text
    assert "connect" in secret and "0123456789abcdef" not in secret
    outside = toolbox.run("outline", {"path": "../../etc/passwd"})
    assert outside.is_error and "outside" in outside.text.lower()
    (repo / ".env").write_text("TOKEN=abc\n")
    assert toolbox.run("outline", {"path": ".env"}).is_error
    not_source = toolbox.run("outline", {"path": "notes.md"})
    assert not_source.is_error and "not in the symbol index" in not_source.text


def test_without_an_index_the_tools_say_so(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    toolbox = Toolbox(repo)
    for name, args in (("find_symbol", {"name": "Store"}), ("outline", {"path": "svc/store.py"})):
        outcome = toolbox.run(name, args)
        assert outcome.is_error and "Grep" in outcome.text
