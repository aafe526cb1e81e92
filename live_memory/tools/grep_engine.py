"""What a Grep engine is asked and answers, and the pure-Python reference engine.

The Python engine defines the semantics; the ripgrep engine must agree with it file for file
and line for line (the test suite checks both on the same trees). A file is searched as raw
UTF-8 (bad bytes replaced, a byte-order mark kept, as `rg --encoding none` sees it); a line is
what `split_lines` says it is, a trailing '\\r' included; a match is a regex search within one
line. A file is binary, and never matches, when a NUL byte occurs in its first
BINARY_SNIFF_BYTES bytes (git's and ripgrep's test, without the UTF-8 heuristic Read adds).
"""

from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass
from typing import Literal, Protocol

from live_memory.config.constants import BINARY_SNIFF_BYTES, GREP_MAX_FILE_BYTES
from live_memory.errors import PathOutsideWorkspace
from live_memory.tools.arguments import BadToolArguments
from live_memory.tools.jail import ListedFileReader, UnreadableFile
from live_memory.tools.scope import Scope
from live_memory.tools.text import split_lines

__all__ = [
    "FileHits",
    "GrepEngine",
    "GrepMode",
    "GrepQuery",
    "GrepTarget",
    "PythonEngine",
    "is_binary_head",
]

logger = logging.getLogger(__name__)

GrepMode = Literal["content", "files_with_matches", "count"]


@dataclass(frozen=True, slots=True)
class GrepQuery:
    pattern: str
    ignore_case: bool
    mode: GrepMode
    per_file_cap: int
    """In content mode, stop collecting a file's lines after this many."""
    lines_needed: int = 0
    """Content mode: line numbers are shown for the first this-many matching lines (files in
    path order); a file after those may come back with its count alone."""


@dataclass(frozen=True, slots=True)
class GrepTarget:
    """Where to search: one file, or the listed files below a directory, maybe globbed."""

    rel: str
    """Workspace-relative file or directory ('' = the whole workspace)."""
    is_file: bool = False
    """`rel` is one file the model named: searched even if ignored, never followed out."""
    glob: re.Pattern[str] | None = None
    """Full-matches a path relative to `rel` (see `compile_glob`)."""
    exclude: bool = False
    """`glob` names the files to leave out (it was written with a leading '!')."""

    def selects(self, path: str) -> bool:
        """Is the workspace-relative `path` below a directory target and through its glob?"""
        if not self.rel:
            rest = path
        elif path.startswith(self.rel) and path[len(self.rel) : len(self.rel) + 1] == "/":
            rest = path[len(self.rel) + 1 :]
        else:
            return False
        return self.glob is None or (self.glob.fullmatch(rest) is None) == self.exclude


@dataclass(frozen=True, slots=True)
class FileHits:
    count: int
    """Matching lines (at most `per_file_cap` in content mode; 1 in files mode)."""
    lines: tuple[int, ...] = ()
    """1-based line numbers, ascending: content mode only, and only where needed (see
    `GrepQuery.lines_needed`)."""


class GrepEngine(Protocol):
    """Searches a target's visible, regular, non-binary files."""

    name: str

    def search(
        self, scope: Scope, query: GrepQuery, target: GrepTarget, deadline: float
    ) -> dict[str, FileHits]:
        """Hits per workspace-relative file with at least one match.

        A file target has already been checked (visible, regular, within the size cap).
        Raises BadToolArguments for an invalid pattern and TimeoutError past `deadline`
        (a `time.monotonic()` value).
        """
        ...


def is_binary_head(data: bytes) -> bool:
    """Grep's binary test on a file's first bytes (or all of them)."""
    return b"\x00" in data[:BINARY_SNIFF_BYTES]


class PythonEngine:
    """Grep with `re`, file by file; used when no ripgrep binary is available."""

    name = "python"

    def search(
        self, scope: Scope, query: GrepQuery, target: GrepTarget, deadline: float
    ) -> dict[str, FileHits]:
        flags = re.IGNORECASE if query.ignore_case else 0
        try:
            line_regex = re.compile(query.pattern, flags)
            # A whole-file search first: most files do not match, and one C-level scan is far
            # cheaper than a Python loop over their lines.
            file_regex = re.compile(query.pattern, flags | re.MULTILINE)
        except re.error as exc:
            raise BadToolArguments(f"Grep: invalid regex {query.pattern!r}: {exc}") from None
        hits: dict[str, FileHits] = {}
        reader = ListedFileReader(scope.root, scope.secret_patterns)
        for rel in _candidates(scope, target):
            if time.monotonic() > deadline:
                raise TimeoutError("the search ran out of time; narrow the path, glob or pattern")
            text = _searchable_text(reader, rel)
            if text is None or file_regex.search(text) is None:
                continue
            found = _search_lines(line_regex, split_lines(text), query)
            if found is not None:
                hits[rel] = found
        return hits


def _candidates(scope: Scope, target: GrepTarget) -> list[str]:
    if target.is_file:
        return [target.rel]
    return [
        rel
        for rel in scope.files_under(target.rel)
        if target.selects(rel)
        and (size := scope.regular_size(rel)) is not None
        and 0 < size <= GREP_MAX_FILE_BYTES
    ]


def _searchable_text(reader: ListedFileReader, rel: str) -> str | None:
    try:
        data = reader.read(rel, GREP_MAX_FILE_BYTES)
    except (UnreadableFile, PathOutsideWorkspace, OSError) as exc:
        logger.debug("grep skips %s: %s", rel, exc)
        return None
    if is_binary_head(data):
        return None
    return data.decode("utf-8", errors="replace")


def _search_lines(regex: re.Pattern[str], lines: list[str], query: GrepQuery) -> FileHits | None:
    count = 0
    numbers: list[int] = []
    for number, line in enumerate(lines, start=1):
        if regex.search(line) is None:
            continue
        count += 1
        if query.mode == "files_with_matches":
            break
        if query.mode == "content":
            numbers.append(number)
            if count >= query.per_file_cap:
                break
    if count == 0:
        return None
    return FileHits(count=count, lines=tuple(numbers))
