"""The ripgrep Grep engine: same answers as the Python engine, several times faster.

ripgrep is given the exact candidate files (never left to walk on its own), so both engines
see the same file set, including what `.gitignore` hides. Each file ripgrep reports is then
sniffed with the same binary test the Python engine uses.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sysconfig
import time
from collections.abc import Sequence

from live_memory.config.constants import BINARY_SNIFF_BYTES, GREP_SNIFF_CACHE_ENTRIES
from live_memory.errors import PathOutsideWorkspace
from live_memory.hygiene import looks_binary
from live_memory.tools.arguments import BadToolArguments
from live_memory.tools.grep_engine import FileHits, GrepQuery
from live_memory.tools.jail import ListedFileReader, UnreadableFile
from live_memory.tools.scope import Scope

__all__ = ["RipgrepEngine", "find_ripgrep"]

logger = logging.getLogger(__name__)

# Flags shared by every mode. --no-config: a user's RIPGREP_CONFIG_PATH must not change answers.
# --text: binary detection is ours (looks_binary), so both engines agree on it.
# --engine=auto: look-around and back-references (valid in Python's `re`) switch to PCRE2.
_BASE_FLAGS = (
    "--no-config",
    "--no-ignore",
    "--hidden",
    "--text",
    "--color=never",
    "--engine=auto",
    "--with-filename",
    "--null",
)
_REGEX_ERROR_MARKERS = ("regex parse error", "error parsing regex", "PCRE2", "unrecognized")


def find_ripgrep() -> str | None:
    """The rg binary: the one installed next to this interpreter's scripts, then PATH."""
    scripts = sysconfig.get_path("scripts")
    if scripts:
        candidate = os.path.join(scripts, "rg")
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return shutil.which("rg")


class RipgrepEngine:
    """Runs `rg` with cwd=root over a batch of workspace-relative files.

    Every reported file is sniffed for binary content; the verdicts are remembered per file
    identity (inode, size, mtime, ctime), because opening each of 20k matching files costs
    more than the search itself. The cache is a plain dict: single get/set operations are
    atomic, so threads may share the engine, and a lost entry only costs a re-sniff.
    """

    name = "ripgrep"

    def __init__(self, binary: str, *, cache_entries: int = GREP_SNIFF_CACHE_ENTRIES) -> None:
        self._binary = binary
        self._cache_entries = cache_entries
        self._is_text: dict[tuple[str, int, int, int, int, int], bool] = {}

    def search(
        self, scope: Scope, query: GrepQuery, files: Sequence[str], deadline: float
    ) -> dict[str, FileHits]:
        if not files:
            return {}
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("the search ran out of time; narrow the path, glob or pattern")
        command = [self._binary, *_BASE_FLAGS, *_mode_flags(query), "--", query.pattern, *files]
        try:
            completed = subprocess.run(
                command,
                cwd=scope.root,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=remaining,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise TimeoutError(
                "the search ran out of time; narrow the path, glob or pattern"
            ) from None
        stderr = completed.stderr.decode("utf-8", errors="replace").strip()
        if completed.returncode == 2 and not completed.stdout:
            if any(marker in stderr for marker in _REGEX_ERROR_MARKERS):
                raise BadToolArguments(
                    f"Grep: invalid regex {query.pattern!r}: {_first_lines(stderr)}"
                )
            logger.warning("rg failed: %s", _first_lines(stderr))
        elif stderr:
            logger.debug("rg reported: %s", _first_lines(stderr))
        hits = _parse(completed.stdout, query)
        reader = ListedFileReader(scope.root, scope.secret_patterns)
        root = str(scope.root)
        return {rel: found for rel, found in hits.items() if self._text_file(root, reader, rel)}

    def _text_file(self, root: str, reader: ListedFileReader, rel: str) -> bool:
        try:
            info = os.stat(os.path.join(root, rel))
        except OSError:
            return False
        key = (rel, info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
        known = self._is_text.get(key)
        if known is not None:
            return known
        try:
            verdict = not looks_binary(reader.head(rel, BINARY_SNIFF_BYTES + 1))
        except (UnreadableFile, PathOutsideWorkspace, OSError):
            return False  # refusals are not remembered: the jail decides afresh every time
        if len(self._is_text) >= self._cache_entries:
            self._is_text.clear()
        self._is_text[key] = verdict
        return verdict


def _mode_flags(query: GrepQuery) -> list[str]:
    flags = ["--ignore-case" if query.ignore_case else "--case-sensitive"]
    if query.mode == "files_with_matches":
        flags.append("--files-with-matches")
    elif query.mode == "count":
        flags.append("--count")
    else:
        # Only line numbers are used (lines are re-read and redacted), so rg may drop the text.
        flags += ["--line-number", "--no-heading", "--max-columns=1"]
        flags.append(f"--max-count={query.per_file_cap}")
    return flags


def _parse(stdout: bytes, query: GrepQuery) -> dict[str, FileHits]:
    hits: dict[str, FileHits] = {}
    if query.mode == "files_with_matches":
        for raw in stdout.split(b"\0"):
            if raw.strip(b"\n"):
                hits[os.fsdecode(raw.strip(b"\n"))] = FileHits(count=1)
        return hits
    lines_by_file: dict[str, list[int]] = {}
    for record in stdout.split(b"\n"):
        raw_path, sep, rest = record.partition(b"\0")
        if not sep:
            continue
        rel = os.fsdecode(raw_path)
        number, _, _ = rest.partition(b":")
        if not number.isdigit():
            continue
        if query.mode == "count":
            hits[rel] = FileHits(count=int(number))
        else:
            lines_by_file.setdefault(rel, []).append(int(number))
    for rel, numbers in lines_by_file.items():
        ordered = tuple(sorted(numbers))
        hits[rel] = FileHits(count=len(ordered), lines=ordered)
    return hits


def _first_lines(text: str, count: int = 4) -> str:
    # rg explains a bad regex over several lines, the reason last ("error: unclosed group").
    reasons = [line for line in text.splitlines() if line.startswith("error:")]
    if reasons:
        return reasons[-1]
    return " ".join(text.splitlines()[:count])
