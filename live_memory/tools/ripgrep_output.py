"""Reading what ripgrep printed: hits on stdout, and what its walk skipped in its debug log.

With `--debug`, ripgrep logs one line per path it leaves out, and why. Three reasons matter
to Grep, because the workspace listing decides them differently:

- "found binary data at offset N": ripgrep stopped at a NUL byte. Grep calls a file binary
  only for a NUL in its first BINARY_SNIFF_BYTES, so a later first NUL means "search again";
- "failed to pass haystack filter ... is_symlink: true": a link ripgrep did not follow, though
  no ignore rule hides it; the listing includes it (Grep follows it while it stays inside);
- ".git" refused by our `!.git` glob below the root: a nested repository or submodule, whose
  files the listing leaves out.

It also names every ignore file it read, which tells when git's answers may have changed.

The log names paths lossily (non-UTF-8 bytes become U+FFFD) and one per line, so a path
with a newline or undecodable bytes cannot be recovered: such a link or late-NUL file is not
searched, and the files below such a nested repository are not dropped.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass

from live_memory.tools.grep_engine import FileHits, GrepMode

__all__ = ["WalkLog", "parse_hits", "parse_walk_log"]

logger = logging.getLogger(__name__)

_LOG_LINE = r"^rg: DEBUG\|[^|\n]*\|\S+ ignoring (?:\./)?"
_BINARY = re.compile(_LOG_LINE + r"(.+): found binary data at offset (\d+)$", re.MULTILINE)
_LINK = re.compile(
    _LOG_LINE + r"(.+): failed to pass haystack filter: file type: [^\n]*is_symlink: true",
    re.MULTILINE,
)
_NESTED_REPOSITORY = re.compile(_LOG_LINE + r"(.+)/\.git: Ignore\(IgnoreMatch\(Override\(", re.M)
_IGNORE_FILE = re.compile(r"^rg: DEBUG\|[^|\n]*\|\S+ opened \w*ignore file: (.+)$", re.MULTILINE)
_COUNT_RECORD = re.compile(r"^([^\0\n]*)\0(\d+)$", re.MULTILINE)
_LINE_RECORD = re.compile(r"^([^\0\n]*)\0(\d+):", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class WalkLog:
    """What ripgrep's walk left out, by workspace-relative path."""

    binary: dict[str, int]
    """File -> offset of the NUL byte that stopped the search."""
    links: tuple[str, ...]
    """Symbolic links the walk reached but did not follow."""
    nested_repositories: tuple[str, ...]
    """`dir/` prefixes of directories holding their own `.git`."""
    ignore_files: frozenset[str]
    """The ignore files read (`.gitignore`s, `info/exclude`, the global one): relative to
    the working directory or absolute."""


def parse_walk_log(stderr: bytes) -> WalkLog:
    """Pick the skipped paths out of `rg --debug` output (other lines are ignored)."""
    text = stderr.decode("utf-8", errors="replace")
    return WalkLog(
        binary={path: int(offset) for path, offset in _BINARY.findall(text)},
        links=tuple(_LINK.findall(text)),
        nested_repositories=tuple(
            f"{path}/" for path in _NESTED_REPOSITORY.findall(text) if path != "."
        ),
        ignore_files=frozenset(_IGNORE_FILE.findall(text)),
    )


def parse_hits(stdout: bytes, mode: GrepMode) -> dict[str, FileHits]:
    """Hits from `rg --null` output: `-l` paths, `-c` counts or `-n` line numbers."""
    text = os.fsdecode(stdout)
    if mode == "files_with_matches":
        paths = text.split("\0")
        paths.pop()  # after the last NUL
        return dict.fromkeys(paths, FileHits(count=1))
    if mode == "count":
        return _counts(text)
    lines_by_file: dict[str, list[int]] = {}
    for path, number in _LINE_RECORD.findall(text):
        lines_by_file.setdefault(path, []).append(int(number))
    return {
        path: FileHits(count=len(numbers), lines=tuple(sorted(numbers)))
        for path, numbers in lines_by_file.items()
    }


def _counts(text: str) -> dict[str, FileHits]:
    """`path\0count\n` records; most files share a handful of counts, so FileHits are
    shared per count."""
    fields = text.replace("\n", "\0").split("\0")
    paths, counts = fields[0:-1:2], fields[1::2]
    try:
        shared = {count: FileHits(count=int(count)) for count in set(counts)}
        if len(paths) != len(counts):
            raise ValueError("unpaired records")
    except ValueError:  # a path with a newline threw the pairs out of step
        return {path: FileHits(count=int(count)) for path, count in _COUNT_RECORD.findall(text)}
    return dict(zip(paths, map(shared.__getitem__, counts), strict=True))
