"""What a Grep engine is asked and answers, and the pure-Python reference engine.

The Python engine defines the semantics; the ripgrep engine must agree with it file for file
and line for line (the test suite checks both on the same trees). A line is what `split_lines`
says it is, a trailing '\\r' included; a match is a regex search within one line.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from live_memory.config.constants import GREP_MAX_FILE_BYTES
from live_memory.errors import PathOutsideWorkspace
from live_memory.hygiene import looks_binary
from live_memory.tools.arguments import BadToolArguments
from live_memory.tools.jail import ListedFileReader, UnreadableFile
from live_memory.tools.scope import Scope
from live_memory.tools.text import decode_text, split_lines

__all__ = ["FileHits", "GrepEngine", "GrepMode", "GrepQuery", "PythonEngine"]

logger = logging.getLogger(__name__)

GrepMode = Literal["content", "files_with_matches", "count"]


@dataclass(frozen=True, slots=True)
class GrepQuery:
    pattern: str
    ignore_case: bool
    mode: GrepMode
    per_file_cap: int
    """In content mode, stop collecting a file's lines after this many."""


@dataclass(frozen=True, slots=True)
class FileHits:
    count: int
    """Matching lines (at most `per_file_cap` in content mode; 1 in files mode)."""
    lines: tuple[int, ...] = ()
    """1-based line numbers, content mode only, ascending."""


class GrepEngine(Protocol):
    """Searches an ordered batch of candidate files (already jailed, regular, visible)."""

    name: str

    def search(
        self, scope: Scope, query: GrepQuery, files: Sequence[str], deadline: float
    ) -> dict[str, FileHits]:
        """Hits per file with at least one match; binary files never hit.

        Raises BadToolArguments for an invalid pattern and TimeoutError past `deadline`
        (a `time.monotonic()` value).
        """
        ...


class PythonEngine:
    """Grep with `re`, file by file; used when no ripgrep binary is available."""

    name = "python"

    def search(
        self, scope: Scope, query: GrepQuery, files: Sequence[str], deadline: float
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
        for rel in files:
            if time.monotonic() > deadline:
                raise TimeoutError("the search ran out of time; narrow the path, glob or pattern")
            text = _searchable_text(reader, rel)
            if text is None or file_regex.search(text) is None:
                continue
            found = _search_lines(line_regex, split_lines(text), query)
            if found is not None:
                hits[rel] = found
        return hits


def _searchable_text(reader: ListedFileReader, rel: str) -> str | None:
    try:
        data = reader.read(rel, GREP_MAX_FILE_BYTES)
    except (UnreadableFile, PathOutsideWorkspace, OSError) as exc:
        logger.debug("grep skips %s: %s", rel, exc)
        return None
    if looks_binary(data):
        return None
    return decode_text(data)


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
