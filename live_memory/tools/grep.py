"""The Grep tool: choose candidate files, search them in batches, format what was found.

Candidates come from the workspace file set (so `.gitignore` and `.git` are honoured the same
way for both engines), minus secret files, links leaving the root and non-regular files.
Batches are searched in path order and the search stops after the batch that reaches
`head_limit`, so the answer is deterministic and identical for both engines.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterator, Sequence

from live_memory.config.constants import (
    GREP_BATCH_MAX_ARG_BYTES,
    GREP_DEFAULT_HEAD_LIMIT,
    GREP_MAX_FILE_BYTES,
    GREP_MAX_LINE_CHARS,
    TOOL_MAX_RESULT_LIMIT,
    TOOL_SUBPROCESS_TIMEOUT_S,
)
from live_memory.errors import PathOutsideWorkspace
from live_memory.tools.arguments import BadToolArguments, ToolArgs
from live_memory.tools.grep_engine import FileHits, GrepEngine, GrepMode, GrepQuery
from live_memory.tools.jail import UnreadableFile, read_workspace_text
from live_memory.tools.outcome import ToolOutcome
from live_memory.tools.path_glob import compile_glob
from live_memory.tools.scope import Scope
from live_memory.tools.text import split_lines

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
    candidates, where = _candidates(scope, path, glob)
    # One line past the limit per file tells "exactly head_limit" apart from "capped".
    query = GrepQuery(
        pattern=pattern, ignore_case=ignore_case, mode=mode, per_file_cap=head_limit + 1
    )
    deadline = time.monotonic() + TOOL_SUBPROCESS_TIMEOUT_S
    found: list[tuple[str, FileHits]] = []
    complete = True
    entries = 0
    for batch in _batches(candidates):
        hits = engine.search(scope, query, batch, deadline)
        for rel in sorted(hits):
            found.append((rel, hits[rel]))
            entries += hits[rel].count if mode == "content" else 1
        if entries >= head_limit and batch[-1] != candidates[-1]:
            complete = False
            break
    if mode == "content" and any(hits.count > head_limit for _, hits in found):
        complete = False  # a file's lines were capped, so the total is only a lower bound
    case = "case-insensitive" if ignore_case else "case-sensitive"
    if not found:
        return ToolOutcome(text=f"No matches for {pattern!r} ({case}) in {where}.")
    if mode == "content":
        lines = _content_lines(scope, found, head_limit)
    elif mode == "count":
        lines = [f"{rel}:{hits.count}" for rel, hits in found]
    else:
        lines = [rel for rel, _ in found]
    return ToolOutcome(text=_format(lines, mode, head_limit, complete, found))


def _candidates(scope: Scope, path: str | None, glob: str | None) -> tuple[list[str], str]:
    """Searchable files (sorted) and a phrase naming where they came from."""
    resolved, rel = scope.locate(path)
    if not resolved.exists():
        raise BadToolArguments(f"Grep: path {path!r} does not exist in the workspace")
    if not resolved.is_dir():
        given = path.strip() if path else rel
        scope.require_visible(rel, given=given)
        size = scope.regular_size(rel)
        if size is None:
            raise UnreadableFile(f"{given} is not a regular file that can be searched", "special")
        return ([rel] if 0 < size <= GREP_MAX_FILE_BYTES else []), rel
    files = scope.files_under(rel)
    where = f"{rel}/" if rel else "the workspace"
    if glob and glob.strip():
        files = _filter_glob(files, rel, glob.strip())
        where += f" (glob {glob.strip()!r})"
    # Stat only what survived the cheap filters; an empty file can never match a line.
    searchable = [
        f
        for f in files
        if (size := scope.regular_size(f)) is not None and 0 < size <= GREP_MAX_FILE_BYTES
    ]
    return searchable, where


def _filter_glob(files: list[str], base: str, glob: str) -> list[str]:
    exclude = glob.startswith("!")
    try:
        regex = compile_glob(glob[1:] if exclude else glob)
    except ValueError as exc:
        raise BadToolArguments(f"Grep: {exc}") from None
    cut = len(base) + 1 if base else 0
    return [f for f in files if (regex.fullmatch(f[cut:]) is None) == exclude]


def _batches(files: Sequence[str]) -> Iterator[list[str]]:
    """Consecutive runs of paths whose command-line size stays under the rg argument limit."""
    batch: list[str] = []
    size = 0
    for rel in files:
        cost = len(rel.encode("utf-8", "surrogateescape")) + 9  # NUL and argv pointer
        if batch and size + cost > GREP_BATCH_MAX_ARG_BYTES:
            yield batch
            batch, size = [], 0
        batch.append(rel)
        size += cost
    if batch:
        yield batch


def _content_lines(scope: Scope, found: list[tuple[str, FileHits]], limit: int) -> list[str]:
    """`path:line:text` for the first `limit` hits, re-read and redacted like Read shows them.

    Hits past `limit` only get a placeholder: they are counted in the footer, never shown.
    """
    out: list[str] = []
    for rel, hits in found:
        if len(out) >= limit:
            out.extend(f"{rel}:{number}:" for number in hits.lines)
            continue
        try:
            text, _ = read_workspace_text(
                scope.root,
                rel,
                max_bytes=GREP_MAX_FILE_BYTES,
                secret_patterns=scope.secret_patterns,
            )
        except (UnreadableFile, PathOutsideWorkspace, OSError) as exc:
            logger.debug("grep cannot show %s: %s", rel, exc)
            continue
        lines = split_lines(text)
        for number in hits.lines:
            if number <= len(lines):
                out.append(f"{rel}:{number}:{_cut(lines[number - 1])}")
    return out


def _cut(line: str) -> str:
    line = line.removesuffix("\r")
    if len(line) <= GREP_MAX_LINE_CHARS:
        return line
    return f"{line[:GREP_MAX_LINE_CHARS]}… [line cut]"


def _format(
    lines: list[str],
    mode: GrepMode,
    head_limit: int,
    complete: bool,
    found: list[tuple[str, FileHits]],
) -> str:
    unit = {"content": "matching lines", "count": "files", "files_with_matches": "files"}[mode]
    shown = lines[:head_limit]
    header = ""
    if mode == "files_with_matches" and complete and len(lines) <= head_limit:
        header = f"Found {len(lines)} file{'s' if len(lines) != 1 else ''}\n"
    text = header + "\n".join(shown)
    if mode == "count" and complete and len(lines) <= head_limit:
        total = sum(hits.count for _, hits in found)
        text += f"\n[{total} matching lines in {len(found)} files]"
    if len(lines) > head_limit and complete:
        text += (
            f"\n[showing {head_limit} of {len(lines)} {unit}; "
            "narrow the search or raise head_limit]"
        )
    elif not complete:
        text += (
            f"\n[showing the first {len(shown)} {unit}; more exist. Narrow path/glob/pattern "
            "or raise head_limit]"
        )
    return text
