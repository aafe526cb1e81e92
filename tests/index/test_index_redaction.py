"""Secrets in signatures, doc lines and imports are redacted before the index stores them: the
database files in the data directory (WAL included) never hold one, and an index of the older,
unredacted format is emptied and rebuilt."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from live_memory.config import constants as C
from live_memory.index import SymbolIndexes
from live_memory.index.extract import extract_symbols
from live_memory.index.store import FileStamp, SymbolStore
from tests.support.repo import make_repo

# Split so this file holds no secret-shaped literal of its own.
AWS = "AKIA" + "QWERTYUIOPASDFGH"
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
PASSWORD = "hunter2" + "Xq9vLm3Zp8"

SOURCE = (
    f'def connect(host, key="{AWS}", password="{PASSWORD}"):\n'
    f'    """Token for CI: {GITHUB}"""\n'
    "    return host\n"
    "\n"
    "class Client:\n"
    f"    # uses api_key = '{PASSWORD}' by default\n"
    f'    def login(self, token="{GITHUB}" + "padding" * 40):\n'
    "        return token\n"
)


def test_extract_redacts_default_arguments_and_doc_lines_before_the_cut() -> None:
    symbols = extract_symbols("app/client.py", SOURCE.encode())
    by_name = {d.name: d for d in symbols.definitions}
    assert set(by_name) == {"connect", "Client", "login"}
    texts = " ".join(f"{d.signature} {d.doc}" for d in symbols.definitions)
    for secret in (AWS, GITHUB, PASSWORD, GITHUB[:20]):
        assert secret not in texts
    assert C.SECRET_REDACTION in by_name["connect"].signature
    assert C.SECRET_REDACTION in by_name["connect"].doc
    assert by_name["connect"].signature.startswith("def connect(host, key=")
    assert len(by_name["login"].signature) <= C.INDEX_SIGNATURE_MAX_CHARS  # still capped


def test_no_secret_reaches_the_index_files_in_the_data_dir(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"app/client.py": SOURCE, "app/ok.py": "def ok(): pass\n"})
    data = tmp_path / "data"
    indexes = SymbolIndexes(data, cpu_share=1.0)
    try:
        index = indexes.open(repo, secret_patterns=(".env",))
        assert index.completed.wait(30) and indexes.wait_idle(30)
        assert [r.location for r in index.find("connect")] == ["app/client.py:1"]
        # The incremental path (teed content) is redacted the same way.
        teed = SOURCE.replace("connect", "reconnect")
        (repo / "app/client.py").write_text(teed)
        assert index.update("app/client.py", teed.encode())
        assert index.find("reconnect") and not index.find("connect")
        on_disk = b"".join(p.read_bytes() for p in sorted(data.rglob("*")) if p.is_file())
    finally:
        indexes.close()
    on_disk += b"".join(p.read_bytes() for p in sorted(data.rglob("*")) if p.is_file())
    assert b"reconnect" in on_disk  # the files read are the index's
    for secret in (AWS, GITHUB, PASSWORD):
        assert secret.encode() not in on_disk


def test_an_index_of_the_older_unredacted_format_is_emptied(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    SymbolStore(path).close()
    db = sqlite3.connect(path)
    db.execute("PRAGMA user_version=0")
    db.execute("INSERT INTO files VALUES ('a.py', 'sha', 'python', 1, 1, NULL, 0)")
    db.execute(
        "INSERT INTO defs VALUES ('a.py', 'f', 'f', 'function', 1, ?, '')", (f'def f(k="{AWS}")',)
    )
    db.commit()
    db.close()
    with SymbolStore(path) as store:
        assert store.file_count() == 0 and store.find("f") == []
        stamp = FileStamp("sha2", 14, 2)
        store.put_many([("b.py", stamp, extract_symbols("b.py", b"def g(): pass\n"))])
    with SymbolStore(path) as store:  # the upgrade ran once: rows of the new format stay
        assert [r.location for r in store.find("g")] == ["b.py:1"]
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == (
        C.INDEX_FORMAT_VERSION
    )
