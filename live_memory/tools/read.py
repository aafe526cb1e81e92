"""The Read tool: a workspace text file with `cat -n` style line numbers."""

from __future__ import annotations

import logging

from live_memory.config.constants import (
    READ_DEFAULT_LIMIT_LINES,
    READ_MAX_FILE_BYTES,
    READ_MAX_LINE_CHARS,
)
from live_memory.tools.arguments import ToolArgs
from live_memory.tools.outcome import Span, ToolOutcome
from live_memory.tools.scope import Scope
from live_memory.tools.text import split_lines
from live_memory.tools.workspace_read import read_workspace_text

__all__ = ["run_read"]

logger = logging.getLogger(__name__)

_MAX_LIMIT = READ_DEFAULT_LIMIT_LINES * 5


def run_read(scope: Scope, args: ToolArgs) -> ToolOutcome:
    """Read{file_path, offset?, limit?}; raises the jail's and the arguments' errors."""
    file_path = args.required_text("file_path", "path", "file", "filename").strip()
    offset = args.integer("offset", "start_line", default=1, minimum=1, maximum=10**9)
    limit = args.integer(
        "limit", "max_lines", default=READ_DEFAULT_LIMIT_LINES, minimum=1, maximum=_MAX_LIMIT
    )
    # The jail checks both the name given (a link called `.env`) and where it points.
    text, read = read_workspace_text(
        scope.root, file_path, max_bytes=READ_MAX_FILE_BYTES, secret_patterns=scope.secret_patterns
    )
    scope.require_visible(read.path)
    rel = read.path
    lines = split_lines(text)
    total = len(lines)
    if total == 0:
        return ToolOutcome(text=f"({rel} is empty)", reads=(read,))
    if offset > total:
        return ToolOutcome(
            text=f"{rel} has {total} lines; offset {offset} is past the end. "
            f"Use an offset between 1 and {total}."
        )
    end = min(offset - 1 + limit, total)
    body = "\n".join(f"{number:>6}\t{_cut(lines[number - 1])}" for number in range(offset, end + 1))
    if offset > 1 or end < total:
        tail = f"; continue with offset={end + 1}" if end < total else ""
        body += f"\n[{rel}: lines {offset}-{end} of {total}{tail}]"
    return ToolOutcome(text=body, reads=(read,), spans=(Span(rel, offset, end),))


def _cut(line: str) -> str:
    line = line.removesuffix("\r")
    if len(line) <= READ_MAX_LINE_CHARS:
        return line
    return f"{line[:READ_MAX_LINE_CHARS]}… [line cut: {len(line) - READ_MAX_LINE_CHARS} more chars]"
