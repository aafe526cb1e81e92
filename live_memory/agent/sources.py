"""An answer's sources: the files and lines it rests on, each checked against the workspace.

Two kinds: what the model cites in its text (`path`, `path:12`, `path:12-30`, a backticked
file name) and what its tools showed it this question (a Read's range, Grep's matching lines).
Each is checked through the jail when the answer is given (the file exists and may be read,
the lines are in range) and marked `seen` when the model saw the file this session (the
window knows it, or a tool showed it this question). A file the answer names but the model
never saw is not passed off as read: `unseen_note` says so beside the answer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from typing import Final

from live_memory.tools import Span

__all__ = ["SOURCES_MAX", "Source", "answer_sources", "cited_paths", "sources_note"]

# A relative path as answers write them: `src/app.py`, `src/app.py:12`, `./README.md`,
# optionally followed by its lines (`:12`, `:12-30`).
_PATH = re.compile(
    r"(?<![\w/.-])(?:\./)?((?:[\w@+-][\w.@+-]*/)*[\w@+-][\w.@+-]*\.[A-Za-z0-9]+)"
    r"(?::(\d{1,9})(?:\s?[-\u2013]\s?(\d{1,9}))?)?"
)
_BACKTICKED: Final = re.compile(r"`([^`\n]{3,200})`")
# File kinds a backticked bare name (`app.py`, no directory) is taken for; `os.path` is no file.
_FILE_SUFFIXES: Final = frozenset(
    {"py", "pyi", "md", "rst", "txt", "toml", "cfg", "ini", "json", "yaml", "yml", "js", "jsx"}
    | {"ts", "tsx", "mjs", "go", "rs", "java", "kt", "c", "h", "cc", "cpp", "hpp", "cs", "rb"}
    | {"php", "sh", "sql", "html", "css", "vue", "swift", "lock"}
)
_TEXT_SCAN_MAX_CHARS = 64 * 1024  # an answer's text scanned for paths (answers are capped)
SOURCES_MAX: Final = 24
"""Sources one answer carries: the text's citations first, then Read ranges, Grep hits."""


@dataclass(frozen=True, slots=True)
class Source:
    """A file (and lines) an answer rests on."""

    path: str
    start_line: int | None
    """None: the file as a whole (the text named it without lines)."""
    end_line: int | None
    checked: bool
    """The file exists in the workspace, may be read, and holds these lines."""
    seen: bool
    """The model saw the file this session (the window knows it, or a tool showed it)."""


def _citations(text: str) -> Iterable[tuple[str, int | None, int | None, bool]]:
    """(path, start, end, has a directory or was backticked) in order of mention."""
    ticked = {m.group(1).strip() for m in _BACKTICKED.finditer(text, 0, _TEXT_SCAN_MAX_CHARS)}
    for match in _PATH.finditer(text, 0, _TEXT_SCAN_MAX_CHARS):
        path, start, end = match.group(1).rstrip("."), match.group(2), match.group(3)
        first = int(start) if start else None
        last = int(end) if end else first
        bare_file = path in ticked and path.rpartition(".")[2].lower() in _FILE_SUFFIXES
        yield path, first, last, "/" in path or bare_file


def cited_paths(text: str, known: Collection[str], limit: int) -> list[str]:
    """Workspace paths `text` names: those the window knows, and any written with a
    directory (`pkg/mod.py`); at most `limit`, in order of first mention."""
    found: dict[str, None] = {}
    for path, _, _, _ in _citations(text):
        if path in known or ("/" in path and ".." not in path.split("/")):
            found[path] = None
            if len(found) >= limit:
                break
    return list(found)


def answer_sources(
    text: str,
    spans: Iterable[Span],
    known: Collection[str],
    line_count: Callable[[str], tuple[str, int] | None],
    *,
    indexed: str = "",
    limit: int = SOURCES_MAX,
) -> list[Source]:
    """The sources of an answer whose model-written text is `text`, whose tools showed
    `spans`, in a session whose window knows the paths in `known` and whose prompt holds
    `indexed` (the structural index's `path:line` lines: a file located there was seen).
    `line_count` is the jail (`Toolbox.line_count`): blocking, asked once per path."""
    shown = list(dict.fromkeys(spans))
    shown_paths = {s.path for s in shown}
    wanted: dict[tuple[str, int | None, int | None], None] = {}
    for cited, start, end, plain in _citations(text):
        path = cited
        if len(wanted) >= limit:
            break
        if ".." in path.split("/") or not (plain or path in known or path in shown_paths):
            continue
        if "/" not in path and path not in known:  # `app.py` for the one known src/app.py
            named = [k for k in (*known, *shown_paths) if k.endswith(f"/{path}")]
            path = named[0] if len(set(named)) == 1 else cited
        if start is None and path in shown_paths:
            continue  # the tool's lines say more than the bare name
        wanted[(path, start, end)] = None
    for span in shown:
        if span.start:  # not a file only named (Grep's file list)
            wanted[(span.path, span.start, span.end)] = None
    counted: dict[str, tuple[str, int] | None] = {}
    sources: list[Source] = []
    for path, start, end in list(wanted)[:limit]:
        if path not in counted:
            counted[path] = line_count(path)
        found = counted[path]
        rel = found[0] if found else path
        last = start if end is None else end
        in_range = start is None or (
            found is not None and last is not None and 1 <= start <= last <= found[1]
        )
        seen = rel in known or rel in shown_paths or path in shown_paths or f"{rel}:" in indexed
        sources.append(Source(rel, start, end, found is not None and in_range, seen))
    return sources


def sources_note(sources: Iterable[Source], *, unseen_too: bool = True) -> str:
    """The lines beside an answer naming what it cites but could not rest on (shown to the
    asker, never stored): files not in the repository (or lines past their end), and (with
    `unseen_too`: not when the whole answer is marked unverified) files the model never saw
    this session."""
    missing: dict[str, None] = {}
    unseen: dict[str, None] = {}
    for s in sources:
        where = s.path if s.start_line is None else f"{s.path}:{_lines(s)}"
        if not s.checked:
            missing[where] = None
        elif not s.seen and unseen_too:
            unseen[s.path] = None
    notes = []
    if missing:
        notes.append(f"[not found in the repository: {', '.join(missing)}]")
    if unseen:
        notes.append(
            f"[unverified: {', '.join(unseen)} (named in the answer, never read this session)]"
        )
    return "\n".join(notes)


def _lines(source: Source) -> str:
    start, end = source.start_line, source.end_line
    return f"{start}" if end is None or end == start else f"{start}-{end}"
