"""The Grep tool: resolve what to search, let the engine search it, show what was found.

Only what is returned is checked and read back: hits are filtered by the scope (secret
files, git internals, the monitoring scope); in content mode the lines shown are read again
through the jail (so no byte from outside the root can reach the answer, whatever a race
made ripgrep see) and redacted with the lines before them, so that a line in the middle of
a multi-line secret (a PEM block) is recognised as such. A file Read refuses as too large
is searched (streamed), and what Grep shows of it is capped like any other file.
"""

from __future__ import annotations

import logging
import os
import re
import time
from typing import cast

from live_memory.config.constants import (
    GREP_DEFAULT_HEAD_LIMIT,
    GREP_MAX_LINE_CHARS,
    GREP_REDACT_CONTEXT_LINES,
    SECRET_REDACTION,
    TOOL_MAX_RESULT_LIMIT,
    TOOL_SUBPROCESS_TIMEOUT_S,
)
from live_memory.errors import LiveMemoryError
from live_memory.hygiene import redact_secrets
from live_memory.path_glob import compile_glob
from live_memory.tools.arguments import BadToolArguments, ToolArgs
from live_memory.tools.beneath import inside_root
from live_memory.tools.grep_engine import FileHits, GrepEngine, GrepMode, GrepQuery, GrepTarget
from live_memory.tools.jail import check_regular, open_in_root
from live_memory.tools.outcome import ToolOutcome
from live_memory.tools.scope import Scope
from live_memory.tools.text import decode_text, split_lines

__all__ = ["run_grep"]

logger = logging.getLogger(__name__)

_MODES: tuple[GrepMode, ...] = ("files_with_matches", "content", "count")
# ripgrep refuses these (it matches one line at a time); refuse them in both engines alike.
_NEWLINE_IN_PATTERN = re.compile(r"\n|(?<!\\)(?:\\\\)*\\n")
_PEM_BEGIN = re.compile(rb"-----BEGIN [A-Z0-9 ]*PRIVATE KEY")
_PEM_END = b"-----END "


def run_grep(scope: Scope, args: ToolArgs, *, engine: GrepEngine) -> ToolOutcome:
    """Grep{pattern, path?, glob?, output_mode?, -i?, head_limit?}; raises argument errors."""
    pattern = args.required_text("pattern", "regex", "query")
    mode = cast(
        GrepMode, args.choice("output_mode", "mode", choices=_MODES, default="files_with_matches")
    )
    ignore_case = args.flag("-i", "case_insensitive", "ignore_case", "i", default=True)
    head_limit = args.integer(
        "head_limit",
        "max_results",
        "limit",
        default=GREP_DEFAULT_HEAD_LIMIT,
        minimum=0,
        maximum=TOOL_MAX_RESULT_LIMIT,
    )
    head_limit = head_limit or TOOL_MAX_RESULT_LIMIT  # 0 means "as many as allowed"
    glob = args.text("glob", "file_pattern", "include")
    path = args.text("path", "directory", "file")
    if _NEWLINE_IN_PATTERN.search(pattern):
        raise BadToolArguments("Grep: patterns match within one line; remove the \\n")
    target, where = _target(scope, path, glob)
    # One line past the limit per file tells "exactly head_limit" apart from "capped".
    query = GrepQuery(pattern, ignore_case, mode, per_file_cap=head_limit + 1)
    deadline = time.monotonic() + TOOL_SUBPROCESS_TIMEOUT_S
    found = engine.search(scope, query, target, deadline)
    for rel in scope.invisible_paths(found):
        del found[rel]
    case = "case-insensitive" if ignore_case else "case-sensitive"
    if not found:
        return ToolOutcome(text=f"No matches for {pattern!r} ({case}) in {where}.")
    if mode == "content":
        lines, total, complete = _content_lines(scope, engine, query, found, deadline)
        return ToolOutcome(text=_format(lines, total, mode, head_limit, complete=complete))
    # Only paths that still open inside the root are shown (one ripgrep reported through a
    # directory a race swapped for a link is not).
    ordered = inside_root(str(scope.root), sorted(found), head_limit + 1)
    lines = [f"{rel}:{found[rel].count}" for rel in ordered] if mode == "count" else ordered
    total = len(found)
    summary = ""
    if mode == "count" and total <= head_limit:
        summary = f"[{sum(hits.count for hits in found.values())} matching lines in {total} files]"
    return ToolOutcome(text=_format(lines, total, mode, head_limit, summary=summary))


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
    if not glob or not glob.strip():
        return GrepTarget(rel=rel), where
    glob = glob.strip()
    exclude = glob.startswith("!")
    try:
        compiled = compile_glob(glob[1:] if exclude else glob)
    except ValueError as exc:
        raise BadToolArguments(f"Grep: {exc}") from None
    return GrepTarget(rel=rel, glob=compiled, exclude=exclude), f"{where} (glob {glob!r})"


def _content_lines(
    scope: Scope,
    engine: GrepEngine,
    query: GrepQuery,
    found: dict[str, FileHits],
    deadline: float,
) -> tuple[list[str], int, bool]:
    """`path:line:text` for the first hits (files in path order), the number of hits in
    all, and whether that number is exact (no file capped at `per_file_cap`)."""
    limit = query.per_file_cap - 1
    capped = {rel: min(hits.count, query.per_file_cap) for rel, hits in found.items()}
    chosen: list[str] = []
    shown = 0
    for rel in sorted(found):
        if shown >= limit:
            break
        chosen.append(rel)
        shown += capped[rel]
    missing = [rel for rel in chosen if not found[rel].lines]
    numbers = {rel: found[rel].lines for rel in chosen}
    if missing:
        numbers.update(engine.line_numbers(scope, query, missing, deadline))
    out: list[str] = []
    for rel in chosen:
        wanted = numbers.get(rel, ())[: max(limit - len(out), 0)]
        out.extend(f"{rel}:{n}:{text}" for n, text in _read_lines(scope, rel, wanted))
    complete = all(count <= limit for count in capped.values())
    return out, sum(capped.values()), complete


def _read_lines(scope: Scope, rel: str, wanted: tuple[int, ...]) -> list[tuple[int, str]]:
    """The wanted lines (1-based, ascending) of a file read through the jail, redacted.

    Streams the file up to the last wanted line. A line inside a private key's PEM block
    (its BEGIN within the GREP_REDACT_CONTEXT_LINES lines before, no END since) is withheld
    whole, whatever it looks like; any other is redacted together with the line before it
    (a key on one line, its value on the next).
    """
    if not wanted:
        return []
    try:
        opened = open_in_root(scope.root, rel, secret_patterns=scope.secret_patterns)
        check_regular(opened.fd, rel)
    except (LiveMemoryError, OSError) as exc:
        logger.debug("grep cannot show %s: %s", rel, exc)
        return []
    out: list[tuple[int, str]] = []
    pending = iter(wanted)
    next_wanted = next(pending)
    previous = b""
    pem_begin = -GREP_REDACT_CONTEXT_LINES  # line number of the last BEGIN marker
    with os.fdopen(opened.fd, "rb") as handle:
        for number, raw in enumerate(handle, 1):
            marker = b"-----" in raw
            if number == next_wanted:
                in_pem = number - pem_begin <= GREP_REDACT_CONTEXT_LINES and number != pem_begin
                if in_pem and not (marker and _PEM_END in raw):
                    out.append((number, SECRET_REDACTION))
                else:
                    text, _ = redact_secrets(decode_text(previous + raw))
                    out.append((number, _cut(split_lines(text)[-1] if text else "")))
                next_wanted = next(pending, 0)
                if not next_wanted:
                    break
            if marker:
                if _PEM_BEGIN.search(raw):
                    pem_begin = number
                elif _PEM_END in raw:
                    pem_begin = -GREP_REDACT_CONTEXT_LINES
            previous = raw
    return out


def _cut(line: str) -> str:
    line = line.removesuffix("\r")
    if len(line) <= GREP_MAX_LINE_CHARS:
        return line
    return f"{line[:GREP_MAX_LINE_CHARS]}… [line cut]"


def _format(
    lines: list[str],
    total: int,
    mode: GrepMode,
    head_limit: int,
    *,
    complete: bool = True,
    summary: str = "",
) -> str:
    """The answer: at most `head_limit` of the `lines` (out of `total`), then a footer."""
    unit = {"content": "matching lines", "count": "files", "files_with_matches": "files"}[mode]
    shown = lines[:head_limit]
    header = ""
    if mode == "files_with_matches" and complete and total <= head_limit:
        header = f"Found {total} file{'s' if total != 1 else ''}\n"
    text = header + "\n".join(shown)
    if summary and complete:
        text += f"\n{summary}"
    if total > head_limit and complete:
        text += f"\n[showing {head_limit} of {total} {unit}; narrow the search or raise head_limit]"
    elif not complete:
        text += (
            f"\n[showing the first {len(shown)} {unit}; more exist. Narrow path/glob/pattern "
            "or raise head_limit]"
        )
    return text
