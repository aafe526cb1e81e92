"""One workspace's symbol index: incremental updates, the background pass, and queries.

Files are read through the tools' jail (no secret file, nothing outside the root) and only
source files in the monitoring scope are indexed. An update from disk costs only a stat when
the file's stat is the one it was last read at (index/stat_memo.py), and stores nothing when
the content hash is unchanged; the background pass skips a file whose size and mtime are
unchanged, so a restart over a persisted index costs one directory listing and a stat per file.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from live_memory.config import constants as C
from live_memory.errors import LiveMemoryError
from live_memory.hygiene import is_secret_path
from live_memory.index.completion import Completion
from live_memory.index.core_map import symbol_line
from live_memory.index.extract import FileSymbols, extract_symbols
from live_memory.index.languages import grammar_for, language_of
from live_memory.index.stat_memo import ABSENT, StatMemo, stat_key
from live_memory.index.store import FileStamp, SymbolRow, SymbolStore
from live_memory.path_glob import glob_set
from live_memory.tools import list_workspace_files, read_workspace_bytes
from live_memory.vendored import in_vendored_dir

__all__ = ["Coverage", "WorkspaceIndex"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Coverage:
    """What /stats reports: files indexed out of the source files the pass found."""

    indexed: int
    total: int | None
    """None until the first background pass has listed the workspace."""
    languages: dict[str, int]
    definitions: int
    complete: bool

    def as_dict(self) -> dict[str, object]:
        return {
            "files_indexed": self.indexed,
            "files_total": self.total,
            "languages": self.languages,
            "definitions": self.definitions,
            "complete": self.complete,
        }


class WorkspaceIndex:
    def __init__(
        self,
        root: Path,
        store: SymbolStore,
        *,
        secret_patterns: tuple[str, ...],
        file_globs: tuple[str, ...] = (),
        vendored: bool = False,
        completed: Completion | None = None,
    ) -> None:
        real = os.path.realpath(root)
        self.root = root if str(root) == real else Path(real)  # one Path per workspace
        self.store = store
        self.secret_patterns = secret_patterns
        self.file_globs = file_globs
        self.vendored = vendored
        """Index vendored directories' files too (`live_memory.vendored`)."""
        self.total: int | None = None
        self.complete = False
        self.generation = 0
        """Bumped on every change of the stored rows (the core map's cache key)."""
        self.completed = completed if completed is not None else Completion()
        """Set when a background pass has finished (the core map is then complete); the
        server's indexes share one condition (`SymbolIndexes`)."""
        self.stat_memo = StatMemo()
        """Files last read from disk by an update, by their stat (the index thread's only)."""
        self._found: tuple[int, dict[tuple[str, str | None, int], tuple[SymbolRow, ...]]] = (
            -1,
            {},
        )
        """`find`'s recent answers and the generation they hold for."""

    # --- what is indexed -----------------------------------------------------------------
    def wanted(self, rel: str) -> bool:
        if language_of(rel) is None or is_secret_path(rel, self.secret_patterns):
            return False
        if not self.vendored and in_vendored_dir(rel):
            return False
        return not self.file_globs or glob_set(self.file_globs).matches(rel)

    def relative(self, path: str) -> str | None:
        """`path` (absolute or workspace-relative) as a clean relative path, or None."""
        if os.path.isabs(path):
            real = os.path.realpath(path)
            if not real.startswith(str(self.root) + os.sep):
                return None
            path = real[len(str(self.root)) + 1 :]
        path = os.path.normpath(path)
        if path.startswith("..") or path == ".":
            return None
        return path.replace(os.sep, "/")

    # --- updating ------------------------------------------------------------------------
    def update(self, path: str, content: bytes | None = None) -> bool:
        """Bring one file's rows up to date (from `content` when the hook teed it, else the
        disk). True when its rows changed. Gone or refused files are removed."""
        rel = self.relative(path)
        if rel is None or not self.wanted(rel):
            return False
        taken_ns = time.time_ns()  # before the stat: the racy rule compares with it
        st = _stat(self.root / rel)
        key = ABSENT if st is None else stat_key(st)
        if content is None and self.stat_memo.unchanged(rel, key):
            return False  # read from disk at this very stat already (index/stat_memo.py)
        item = self._parse(rel, content, self.store.stamp(rel), st)
        if isinstance(item, tuple):
            self.store.put_many([item])
        elif item is not None:
            self.store.remove([rel])
        if content is None:
            self.stat_memo.read(rel, key, taken_ns)
        else:  # teed bytes: not necessarily what the disk holds
            self.stat_memo.forget(rel)
        if item is None:
            return False
        self.generation += 1
        return True

    def _parse(
        self,
        rel: str,
        content: bytes | None,
        known: FileStamp | None,
        st: os.stat_result | None,
    ) -> tuple[str, FileStamp, FileSymbols] | str | None:
        """(rel, stamp, symbols) to store, "gone" to drop, None when nothing changed; `st`
        is the file's stat (None: it is not there)."""
        if st is None:
            return "gone" if known else None
        if st.st_size > C.INDEX_MAX_FILE_BYTES and content is None:
            stamp = FileStamp("", st.st_size, st.st_mtime_ns)
            if known == stamp:
                return None
            return rel, stamp, FileSymbols(language_of(rel), skipped="too large")
        if content is None:
            try:
                content, _ = read_workspace_bytes(
                    self.root,
                    rel,
                    max_bytes=C.INDEX_MAX_FILE_BYTES,
                    secret_patterns=self.secret_patterns,
                )
            except (LiveMemoryError, OSError) as exc:
                logger.debug("index skips %s: %s", rel, exc)
                return "gone" if known else None
        sha = hashlib.sha256(content).hexdigest()
        stamp = FileStamp(sha, len(content), st.st_mtime_ns)
        if known is not None and known.sha == sha:
            return None
        return rel, stamp, extract_symbols(rel, content)

    def background_pass(self) -> Iterator[None]:
        """Index every wanted file not indexed at its current size and mtime; yields after
        each bounded slice (at most INDEX_SLICE_FILES files or INDEX_SLICE_MAX_S)."""
        listed = list_workspace_files(self.root, vendored=self.vendored)
        listed = [p for p in listed if self.wanted(p)]
        self.total = len(listed)
        # Each language's grammar loads once per process (40-260 ms): here, on the index
        # thread, rather than in the first incremental update after a restart re-parsed nothing.
        for language in sorted({lang for p in listed if (lang := language_of(p)) is not None}):
            grammar_for(language)
        stamps = self.store.stamps()
        gone = set(stamps).difference(listed)
        if gone:
            self.store.remove(gone)
            for rel in gone:  # an update must not take it for unchanged and leave it out
                self.stat_memo.forget(rel)
            self.generation += 1
        yield
        batch: list[tuple[str, FileStamp, FileSymbols]] = []
        started = time.monotonic()
        for rel in listed:
            known = stamps.get(rel)
            st = _stat(self.root / rel)
            if known is not None and st is not None and _unchanged(st, known):
                continue
            item = self._parse(rel, None, known, st)
            if isinstance(item, tuple):
                batch.append(item)
            if len(batch) >= C.INDEX_SLICE_FILES or time.monotonic() - started > (
                C.INDEX_SLICE_MAX_S
            ):
                self._flush(batch)
                batch = []
                yield
                started = time.monotonic()
        self._flush(batch)
        self.complete = True
        self.generation += 1
        self.completed.set()

    def _flush(self, batch: list[tuple[str, FileStamp, FileSymbols]]) -> None:
        if batch:
            self.store.put_many(batch)
            self.generation += 1

    # --- reading -------------------------------------------------------------------------
    def find(self, name: str, kind: str | None = None, limit: int = 50) -> list[SymbolRow]:
        """Definitions named `name` (SymbolStore.find). Recent look-ups are remembered while
        the rows are unchanged (one `generation`): questions name the same identifiers again,
        and most words a question is searched for are no symbol at all, a query each."""
        generation = self.generation  # read first: every change of the rows bumps it after
        tag, found = self._found
        if tag != generation:
            found = {}
            self._found = (generation, found)
        key = (name, kind, limit)
        rows = found.get(key)
        if rows is None or self.store.closed:
            rows = tuple(self.store.find(name, kind, limit))  # a closed store raises
            if len(found) >= C.SYMBOL_FIND_MEMO_MAX:
                found.clear()
            found[key] = rows
        return list(rows)

    def symbol_lines(self, name: str, kind: str | None, limit: int) -> list[tuple[str, str]]:
        """find_symbol's rows as (path, `path:line [kind] name: signature — doc`)."""
        return [(row.path, symbol_line(row)) for row in self.store.find(name, kind, limit)]

    def outline_lines(self, rel: str) -> list[str] | None:
        """outline's lines for `rel`, or None when the file is not indexed."""
        rows, imports, stamp = self.store.outline(rel)
        if stamp is None:
            return None
        lines = [f"imports: {', '.join(imports)}"] if imports else []
        for row in rows:
            line = f"{row.line} [{row.kind}] {row.qualified}: {row.signature}"
            lines.append(line + (f"  — {row.doc}" if row.doc else ""))
        return lines

    def status(self) -> str:
        done = "complete" if self.complete else "still indexing"
        total = "?" if self.total is None else str(self.total)
        return f"index {done}: {self.store.file_count()} of {total} source files"

    def coverage(self) -> Coverage:
        languages = self.store.languages()
        return Coverage(
            indexed=sum(languages.values()),
            total=self.total,
            languages=languages,
            definitions=self.store.definition_count(),
            complete=self.complete,
        )


def _stat(path: Path) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None


def _unchanged(st: os.stat_result, known: FileStamp) -> bool:
    return st.st_size == known.size and st.st_mtime_ns == known.mtime_ns
