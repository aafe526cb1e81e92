"""The Grep tool: resolve what to search, let the engine (`ripgrep.py`, or `grep_fallback.py`
without rg) search it, check what it found: hits pass the scope (secrets, git internals, the
monitoring scope); content mode reads the lines shown through the jail (no byte from outside the
root, whatever a race made the walk see), redacted in one call, withheld inside a PEM key."""

from __future__ import annotations

import os
import re
import time
from bisect import bisect_right
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal, NamedTuple, cast

from live_memory.config import constants as C
from live_memory.hygiene import redact_lines
from live_memory.path_glob import PathGlob
from live_memory.tools.arguments import BadToolArguments, ToolArgs, tool_glob
from live_memory.tools.beneath import inside_root
from live_memory.tools.jail import check_regular, open_files_in_root, open_in_root
from live_memory.tools.outcome import Span, ToolOutcome
from live_memory.tools.scope import Scope
from live_memory.tools.text import decode_text

__all__ = ["OUT_OF_TIME", "GrepEngine", "GrepMode", "GrepQuery", "GrepTarget", "Hits", "run_grep"]

GrepMode = Literal["files_with_matches", "content", "count"]
_MODES: tuple[GrepMode, ...] = ("files_with_matches", "content", "count")
_UNITS = {"content": "matching lines", "count": "files", "files_with_matches": "files"}
# head_limit 0 means "as many as allowed"
_LIMIT = {"default": C.GREP_DEFAULT_HEAD_LIMIT, "minimum": 0, "maximum": C.TOOL_MAX_RESULT_LIMIT}
_CAPPED = "\n[showing the first {} {}; more exist. Narrow path/glob/pattern or raise head_limit]"
_MORE = "\n[showing {} of {} {}; narrow the search or raise head_limit]"
# ripgrep refuses these (it matches one line at a time); refuse them in both engines alike.
_NEWLINE_IN_PATTERN = re.compile(r"\n|(?<!\\)(?:\\\\)*\\n")
# Key blocks (a PEM private key, a PuTTY key's private lines): their lines are withheld.
_PEM_BEGIN = re.compile(rb"-----BEGIN [A-Z0-9 ]*PRIVATE KEY|^[ \t]*Private-Lines:")
_PEM_END = re.compile(rb"-----END |^[ \t]*Private-MAC:")
_MARKERS = re.compile(rb"-----|Private-")
OUT_OF_TIME = "the search ran out of time; narrow the path, glob or pattern"  # a TimeoutError


@dataclass(frozen=True, slots=True)
class GrepQuery:
    pattern: str
    ignore_case: bool
    mode: GrepMode
    per_file_cap: int  # content mode: a file's matching lines are collected up to this many
    deadline: float  # time.monotonic() past which the engine gives up (TimeoutError)


@dataclass(frozen=True, slots=True)
class GrepTarget:
    rel: str  # workspace-relative file or directory ('' = the whole workspace)
    fd: int = -1  # one file, opened by the jail: searched even if ignored or big (run_grep closes)
    glob: PathGlob | None = None  # matches a path relative to `rel` ...
    exclude: bool = False  # ... and names the files left out

    def selected(self, paths: Iterable[str]) -> list[str]:  # one C call per path (20k)
        if self.glob is None:
            return list(paths)
        cut, match = len(self.rel) + 1 if self.rel else 0, self.glob.regex.fullmatch
        return [p for p in paths if (match(p[cut:]) is None) == self.exclude]


# matching lines per workspace-relative file (files mode: 1; content: <= per_file_cap), and in
# content mode their numbers when the walk has them (None: `numbers` numbers the files shown)
Hits = tuple[dict[str, int], dict[str, list[int]] | None]
_Row = tuple[str, int, str]  # a line shown: file, number, text


class GrepEngine(NamedTuple):  # each raises BadToolArguments (bad regex) or TimeoutError
    search: Callable[[Scope, GrepQuery, GrepTarget], Hits]
    # {file: its descriptor the jail opened} -> their hits (the named file; the files shown)
    numbers: Callable[[Scope, GrepQuery, dict[str, int]], Hits]


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
    deadline = time.monotonic() + C.TOOL_SUBPROCESS_TIMEOUT_S
    # One line past the limit per file tells "exactly `limit`" apart from "capped".
    query = GrepQuery(pattern, ignore_case, mode, per_file_cap=limit + 1, deadline=deadline)
    if target.fd < 0:
        found, numbered = engine.search(scope, query, target)
    else:  # the named file by its descriptor; not searched if binary, as rg's walk would say
        with os.fdopen(target.fd, "rb") as named:  # (closed here)
            files = {target.rel: target.fd} if b"\0" not in named.read(C.BINARY_SNIFF_BYTES) else {}
            found, numbered = engine.numbers(scope, query, files)
    for rel in scope.invisible_paths(found):
        del found[rel]
    if not found:
        case = "case-insensitive" if ignore_case else "case-sensitive"
        return ToolOutcome(text=f"No matches for {pattern!r} ({case}) in {where}.")
    total, complete, header, summary = len(found), True, "", ""
    spans: tuple[Span, ...] = ()
    matched = sum(found.values())
    if mode == "content":
        rows = _rows(scope, engine, query, (found, numbered))
        texts, most = redact_lines([t for _, _, t in rows]), C.GREP_MAX_LINE_CHARS
        cut = [t[:most] + "… [line cut]" * (len(t) > most) for t in texts]  # never half a secret
        lines = [f"{r}:{n}:{t}" for (r, n, _), t in zip(rows, cut, strict=True)]
        total, complete = matched, max(found.values()) <= limit
        spans = tuple(Span(r, n, n) for r, n, _ in rows[:limit])
    else:  # only paths that still open inside the root (not through a raced link)
        lines = inside_root(str(scope.root), sorted(found), limit + 1)
        spans = tuple(Span(rel, 0, 0) for rel in lines[:limit])  # named, no lines shown
        if mode == "count":
            lines = [f"{rel}:{found[rel]}" for rel in lines]
            summary = f"\n[{matched} matching lines in {total} files]"
        elif total <= limit:
            header = f"Found {total} file{'s' if total != 1 else ''}\n"
    if not complete:
        summary = _CAPPED.format(min(len(lines), limit), _UNITS[mode])
    elif total > limit:
        summary = _MORE.format(limit, total, _UNITS[mode])
    return ToolOutcome(text=header + "\n".join(lines[:limit]) + summary, spans=spans)


def _target(scope: Scope, path: str | None, glob: str | None) -> tuple[GrepTarget, str]:
    """What to search and a phrase naming it."""
    resolved, rel = scope.locate(path)
    if not resolved.exists():
        raise BadToolArguments(f"Grep: path {path!r} does not exist in the workspace")
    if not resolved.is_dir():
        given = path.strip() if path else rel
        scope.require_visible(rel, given=given)
        opened = open_in_root(scope.root, rel, secret_patterns=scope.secret_patterns)
        return GrepTarget(rel, fd=check_regular(opened.fd, given)), rel  # not a FIFO or device
    where = f"{rel}/" if rel else "the workspace"
    if not (glob := (glob or "").strip()):
        return GrepTarget(rel), where
    compiled = tool_glob("Grep", glob.removeprefix("!"))
    return GrepTarget(rel, glob=compiled, exclude=glob[0] == "!"), f"{where} (glob {glob!r})"


def _rows(scope: Scope, engine: GrepEngine, query: GrepQuery, hits: Hits) -> list[_Row]:
    """The first `limit` matching lines, files in path order, in batches (one, usually)."""
    (found, numbered), start, limit = hits, 0, query.per_file_cap - 1
    rows, files = list[_Row](), sorted(found)
    while start < len(files) and len(rows) < limit:
        chosen, need = list[str](), limit - len(rows)
        while start < len(files) and need > 0 and len(chosen) < C.GREP_OPEN_FILES_MAX:
            chosen.append(files[start])
            start, need = start + 1, need - found[files[start]]
        opened = open_files_in_root(scope.root, chosen, secret_patterns=scope.secret_patterns)
        try:  # (a file gone or swapped since the walk is not opened: the next ones fill in)
            numbers = numbered or engine.numbers(scope, query, opened)[1] or {}
            for rel, fd in opened.items():  # in path order
                rows += _read_lines(rel, fd, numbers.get(rel, [])[: limit - len(rows)])
        finally:
            for fd in opened.values():
                os.close(fd)
    return rows


def _read_lines(rel: str, fd: int, want: list[int]) -> list[_Row]:
    """The wanted lines, unredacted; withheld inside a key block (BEGIN <= 64 lines up, no END).
    Lines are read in blocks; only a block holding a marker is scanned line by line."""
    out: list[_Row] = []
    done, pem_begin, ctx = 0, -C.GREP_REDACT_CONTEXT_LINES, C.GREP_REDACT_CONTEXT_LINES
    with os.fdopen(fd, "rb", closefd=False) as handle:
        while len(out) < len(want) and (block := handle.readlines(C.GREP_READ_BLOCK_BYTES)):
            marked, to = _MARKERS.search(b"".join(block)) is not None, done + len(block)
            todo = range(done + 1, to + 1) if marked else want[len(out) : bisect_right(want, to)]
            for number in todo:
                raw = block[number - done - 1]
                ends = marked and _PEM_END.search(raw) is not None
                if len(out) < len(want) and number == want[len(out)]:
                    withheld = 0 < number - pem_begin <= ctx and not ends
                    text = decode_text(raw.rstrip(b"\n")).removesuffix("\r")
                    out.append((rel, number, C.SECRET_REDACTION if withheld else text))
                if marked and _PEM_BEGIN.search(raw):
                    pem_begin = number
                elif ends:
                    pem_begin = -ctx
            done = to
    return out
