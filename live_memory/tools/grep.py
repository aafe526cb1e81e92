"""The Grep tool: resolve what to search, let the engine (`ripgrep.py`, or `grep_fallback.py`
without rg) search it, show what was found. Only what is returned is checked: hits pass the
scope (secrets, git internals, the monitoring scope); the lines shown are read again through
the jail (no byte from outside the root, whatever a race made rg see) and redacted in one
call; inside a private key's PEM block they are withheld whole."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal, NamedTuple, cast

from live_memory.config import constants as C
from live_memory.errors import LiveMemoryError
from live_memory.hygiene import redact_lines
from live_memory.path_glob import PathGlob, compile_glob
from live_memory.tools.arguments import BadToolArguments, ToolArgs
from live_memory.tools.beneath import inside_root
from live_memory.tools.jail import check_regular, open_in_root
from live_memory.tools.outcome import ToolOutcome
from live_memory.tools.scope import Scope
from live_memory.tools.text import decode_text

__all__ = ["FileHits", "GrepEngine", "GrepMode", "GrepQuery", "GrepTarget", "run_grep"]

GrepMode = Literal["files_with_matches", "content", "count"]
_MODES: tuple[GrepMode, ...] = ("files_with_matches", "content", "count")
_UNITS = {"content": "matching lines", "count": "files", "files_with_matches": "files"}
# head_limit 0 means "as many as allowed"
_LIMIT = {"default": C.GREP_DEFAULT_HEAD_LIMIT, "minimum": 0, "maximum": C.TOOL_MAX_RESULT_LIMIT}
_CAPPED = "\n[showing the first {} {}; more exist. Narrow path/glob/pattern or raise head_limit]"
_MORE = "\n[showing {} of {} {}; narrow the search or raise head_limit]"
# ripgrep refuses these (it matches one line at a time); refuse them in both engines alike.
_NEWLINE_IN_PATTERN = re.compile(r"\n|(?<!\\)(?:\\\\)*\\n")
_NUMBER = re.compile(rb"^(\d+):", re.MULTILINE)
_PEM_BEGIN = re.compile(rb"-----BEGIN [A-Z0-9 ]*PRIVATE KEY")
_PEM_END = b"-----END "


@dataclass(frozen=True, slots=True)
class GrepQuery:
    pattern: str
    ignore_case: bool
    mode: GrepMode
    per_file_cap: int  # content mode: a file's matching lines are collected up to this many


@dataclass(frozen=True, slots=True)
class GrepTarget:
    rel: str  # workspace-relative file or directory ('' = the whole workspace)
    is_file: bool = False  # one file: searched even if ignored or big
    glob: PathGlob | None = None  # matches a path relative to `rel` ...
    exclude: bool = False  # ... and names the files left out

    def selected(self, paths: Iterable[str]) -> list[str]:  # one C call per path (20k)
        if self.glob is None:
            return list(paths)
        cut, match = len(self.rel) + 1 if self.rel else 0, self.glob.regex.fullmatch
        return [p for p in paths if (match(p[cut:]) is None) == self.exclude]


class FileHits(NamedTuple):  # a tuple: 20k of them are built per search
    matched: int  # lines (at most `per_file_cap` in content mode; 1 in files mode)
    records: bytes = b""  # content mode: rg's `N:...` records, one per line, ascending ...
    end: int = 0  # ... up to here (rg's output is kept whole, not copied per file)

    def line_numbers(self) -> list[int]:
        return [int(number) for number in _NUMBER.findall(self.records, 0, self.end)]


# (scope, query, target, deadline) -> hits per workspace-relative file; BadToolArguments for
# a bad regex, TimeoutError past the deadline.
GrepEngine = Callable[[Scope, GrepQuery, GrepTarget, float], dict[str, FileHits]]


def out_of_time() -> TimeoutError:
    return TimeoutError("the search ran out of time; narrow the path, glob or pattern")


def run_grep(scope: Scope, args: ToolArgs, *, engine: GrepEngine) -> ToolOutcome:
    """Grep{pattern, path?, glob?, output_mode?, -i?, head_limit?}; raises argument errors."""
    pattern = args.required_text("pattern", "regex", "query")
    mode = cast(GrepMode, args.choice("output_mode", "mode", choices=_MODES, default=_MODES[0]))
    ignore_case = args.flag("-i", "case_insensitive", "ignore_case", "i", default=True)
    limit = args.integer("head_limit", "max_results", "limit", **_LIMIT) or _LIMIT["maximum"]
    if _NEWLINE_IN_PATTERN.search(pattern):
        raise BadToolArguments("Grep: patterns match within one line; remove the \\n")
    glob = args.text("glob", "file_pattern", "include")
    target, where = _target(scope, args.text("path", "directory", "file"), glob)
    # One line past the limit per file tells "exactly `limit`" apart from "capped".
    query = GrepQuery(pattern, ignore_case, mode, per_file_cap=limit + 1)
    found = engine(scope, query, target, time.monotonic() + C.TOOL_SUBPROCESS_TIMEOUT_S)
    for rel in scope.invisible_paths(found):
        del found[rel]
    if not found:
        case = "case-insensitive" if ignore_case else "case-sensitive"
        return ToolOutcome(text=f"No matches for {pattern!r} ({case}) in {where}.")
    total, complete, header, summary = len(found), True, "", ""
    matched = sum(hits.matched for hits in found.values())
    if mode == "content":
        rows: list[tuple[str, int, str]] = []
        for rel in sorted(found):  # the first `limit` lines, files in path order
            wanted = found[rel].line_numbers()[: limit - len(rows)]
            rows.extend((rel, n, text) for n, text in _read_lines(scope, rel, wanted))
            if len(rows) >= limit:
                break
        texts, most = redact_lines([t for _, _, t in rows]), C.GREP_MAX_LINE_CHARS
        cut = [t[:most] + "… [line cut]" * (len(t) > most) for t in texts]  # never half a secret
        lines = [f"{r}:{n}:{t}" for (r, n, _), t in zip(rows, cut, strict=True)]
        total = matched
        complete = all(hits.matched <= limit for hits in found.values())
    else:  # only paths that still open inside the root (not through a raced link)
        lines = inside_root(str(scope.root), sorted(found), limit + 1)
        if mode == "count":
            lines = [f"{rel}:{found[rel].matched}" for rel in lines]
            summary = f"\n[{matched} matching lines in {total} files]"
        elif total <= limit:
            header = f"Found {total} file{'s' if total != 1 else ''}\n"
    if not complete:
        summary = _CAPPED.format(min(len(lines), limit), _UNITS[mode])
    elif total > limit:
        summary = _MORE.format(limit, total, _UNITS[mode])
    return ToolOutcome(text=header + "\n".join(lines[:limit]) + summary)


def _target(scope: Scope, path: str | None, glob: str | None) -> tuple[GrepTarget, str]:
    """What to search and a phrase naming it."""
    resolved, rel = scope.locate(path)
    if not resolved.exists():
        raise BadToolArguments(f"Grep: path {path!r} does not exist in the workspace")
    if not resolved.is_dir():
        given = path.strip() if path else rel
        scope.require_visible(rel, given=given)
        opened = open_in_root(scope.root, rel, secret_patterns=scope.secret_patterns)
        check_regular(opened.fd, given)  # raises for a FIFO, socket or device
        os.close(opened.fd)
        return GrepTarget(rel=rel, is_file=True), rel
    where = f"{rel}/" if rel else "the workspace"
    glob = (glob or "").strip()
    if not glob:
        return GrepTarget(rel=rel), where
    try:
        compiled = compile_glob(glob.removeprefix("!"))
    except ValueError as exc:
        raise BadToolArguments(f"Grep: {exc}") from None
    return GrepTarget(rel, glob=compiled, exclude=glob[0] == "!"), f"{where} (glob {glob!r})"


def _read_lines(scope: Scope, rel: str, wanted: list[int]) -> list[tuple[int, str]]:
    """The wanted lines (ascending) of a file, streamed through the jail, not yet redacted
    (no secret shape spans lines: `redact_lines` masks each alone); a line inside a PEM block
    (BEGIN within GREP_REDACT_CONTEXT_LINES before, no END since) is withheld whole."""
    try:
        opened = open_in_root(scope.root, rel, secret_patterns=scope.secret_patterns)
        check_regular(opened.fd, rel)
    except (LiveMemoryError, OSError):
        return []  # gone or swapped since rg saw it: nothing to show
    out: list[tuple[int, str]] = []
    pending = iter(wanted)
    next_wanted, pem_begin = next(pending, 0), -C.GREP_REDACT_CONTEXT_LINES
    with os.fdopen(opened.fd, "rb") as handle:
        for number, raw in enumerate(handle, 1):
            if not next_wanted:
                break
            marker = b"-----" in raw
            if number == next_wanted:
                in_pem = 0 < number - pem_begin <= C.GREP_REDACT_CONTEXT_LINES
                withheld = in_pem and not (marker and _PEM_END in raw)
                text = decode_text(raw.rstrip(b"\n")).removesuffix("\r")
                out.append((number, C.SECRET_REDACTION if withheld else text))
                next_wanted = next(pending, 0)
            if marker and _PEM_BEGIN.search(raw):
                pem_begin = number
            elif marker and _PEM_END in raw:
                pem_begin = -C.GREP_REDACT_CONTEXT_LINES
    return out
