"""The Grep tool: resolve what to search, let an engine search it, format what was found.

The engines search the workspace file set (so `.gitignore` and `.git` are honoured the same
way for both), minus secret files, links leaving the root, non-regular and binary files, and
return every hit; files are reported in path order, so the answer is deterministic and
identical for both engines.
"""

from __future__ import annotations

import logging
import re
import time

from live_memory.config.constants import (
    GREP_DEFAULT_HEAD_LIMIT,
    GREP_MAX_FILE_BYTES,
    GREP_MAX_LINE_CHARS,
    TOOL_MAX_RESULT_LIMIT,
    TOOL_SUBPROCESS_TIMEOUT_S,
)
from live_memory.errors import PathOutsideWorkspace
from live_memory.hygiene import redact_secrets
from live_memory.path_glob import compile_glob
from live_memory.tools.arguments import BadToolArguments, ToolArgs
from live_memory.tools.grep_engine import FileHits, GrepEngine, GrepMode, GrepQuery, GrepTarget
from live_memory.tools.jail import ListedFileReader, UnreadableFile
from live_memory.tools.outcome import ToolOutcome
from live_memory.tools.scope import Scope
from live_memory.tools.text import decode_text, split_lines

__all__ = ["run_grep"]

logger = logging.getLogger(__name__)

_MODES: tuple[GrepMode, ...] = ("files_with_matches", "content", "count")
# ripgrep refuses these (it matches one line at a time); refuse them in both engines alike.
_NEWLINE_IN_PATTERN = re.compile(r"\n|(?<!\\)(?:\\\\)*\\n")


def run_grep(scope: Scope, args: ToolArgs, *, engine: GrepEngine) -> ToolOutcome:
    """Grep{pattern, path?, glob?, output_mode?, -i?, head_limit?}; raises argument errors."""
    pattern = args.required_text("pattern", "regex", "query")
    mode_text = args.choice("output_mode", "mode", choices=_MODES, default="files_with_matches")
    mode: GrepMode = (
        "content"
        if mode_text == "content"
        else ("count" if mode_text == "count" else "files_with_matches")
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
    query = GrepQuery(
        pattern=pattern,
        ignore_case=ignore_case,
        mode=mode,
        per_file_cap=head_limit + 1,
        lines_needed=head_limit,
    )
    deadline = time.monotonic() + TOOL_SUBPROCESS_TIMEOUT_S
    found = engine.search(scope, query, target, deadline) if target else {}
    # A file's lines capped at the limit make the total only a lower bound.
    complete = mode != "content" or all(hits.count <= head_limit for hits in found.values())
    case = "case-insensitive" if ignore_case else "case-sensitive"
    if not found:
        return ToolOutcome(text=f"No matches for {pattern!r} ({case}) in {where}.")
    if mode == "content":
        lines, total = _content_lines(scope, found, head_limit)
    else:
        first = sorted(found)[: head_limit + 1]  # only the lines shown are formatted
        lines = [f"{rel}:{found[rel].count}" for rel in first] if mode == "count" else first
        total = len(found)
    summary = ""
    if mode == "count" and total <= head_limit:
        summary = f"[{sum(hits.count for hits in found.values())} matching lines in {total} files]"
    return ToolOutcome(
        text=_format(lines, total, mode, head_limit, complete=complete, summary=summary)
    )


def _target(scope: Scope, path: str | None, glob: str | None) -> tuple[GrepTarget | None, str]:
    """What to search (None: a file too big or empty to match) and a phrase naming it."""
    resolved, rel = scope.locate(path)
    if not resolved.exists():
        raise BadToolArguments(f"Grep: path {path!r} does not exist in the workspace")
    if not resolved.is_dir():
        given = path.strip() if path else rel
        scope.require_visible(rel, given=given)
        size = scope.regular_size(rel)
        if size is None:
            raise UnreadableFile(f"{given} is not a regular file that can be searched", "special")
        # An empty file can never match a line; a huge one is skipped like in a directory.
        searchable = 0 < size <= GREP_MAX_FILE_BYTES
        return (GrepTarget(rel=rel, is_file=True) if searchable else None), rel
    where = f"{rel}/" if rel else "the workspace"
    if not glob or not glob.strip():
        return GrepTarget(rel=rel), where
    glob = glob.strip()
    exclude = glob.startswith("!")
    try:
        regex = compile_glob(glob[1:] if exclude else glob).regex
    except ValueError as exc:
        raise BadToolArguments(f"Grep: {exc}") from None
    return GrepTarget(rel=rel, glob=regex, exclude=exclude), f"{where} (glob {glob!r})"


def _content_lines(scope: Scope, found: dict[str, FileHits], limit: int) -> tuple[list[str], int]:
    """`path:line:text` for the first `limit` hits (files in path order), re-read and redacted
    like Read shows them, and the number of hits in all.

    Hits past `limit` are only counted in the footer, never shown.
    """
    out: list[str] = []
    later = 0
    # Not read_workspace_text: Grep's binary test is its own (a NUL byte), and a file it found
    # is shown even if Read would call it binary. Still jailed, secret files still refused.
    reader = ListedFileReader(scope.root, scope.secret_patterns)
    for rel in sorted(found):
        hits = found[rel]
        if len(out) >= limit:
            later += hits.count
            continue
        try:
            data = reader.read(rel, GREP_MAX_FILE_BYTES)
        except (UnreadableFile, PathOutsideWorkspace, OSError) as exc:
            logger.debug("grep cannot show %s: %s", rel, exc)
            continue
        text, _ = redact_secrets(decode_text(data))
        lines = split_lines(text)
        for number in hits.lines:
            if number <= len(lines):
                out.append(f"{rel}:{number}:{_cut(lines[number - 1])}")
    return out, len(out) + later


def _cut(line: str) -> str:
    line = line.removesuffix("\r")
    if len(line) <= GREP_MAX_LINE_CHARS:
        return line
    return f"{line[:GREP_MAX_LINE_CHARS]}… [line cut]"


def _format(
    lines: list[str], total: int, mode: GrepMode, head_limit: int, *, complete: bool, summary: str
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
