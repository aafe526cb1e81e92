"""The find_paths tool: a bounded, find-style listing of files and directories."""

from __future__ import annotations

import logging
import posixpath
from collections import Counter

from live_memory.config.constants import (
    FIND_PATHS_DEFAULT_DEPTH,
    FIND_PATHS_DEFAULT_LIMIT,
    FIND_PATHS_MAX_DEPTH,
    TOOL_MAX_RESULT_LIMIT,
)
from live_memory.tools.arguments import BadToolArguments, ToolArgs, tool_glob
from live_memory.tools.glob import search_directory
from live_memory.tools.outcome import ToolOutcome
from live_memory.tools.scope import Scope

__all__ = ["run_find_paths"]

logger = logging.getLogger(__name__)

_TYPES = {"f": "f", "file": "f", "files": "f", "d": "d", "dir": "d", "directory": "d"}


def run_find_paths(scope: Scope, args: ToolArgs) -> ToolOutcome:
    """find_paths{path?, name?, type?, max_depth?, limit?}; raises jail and argument errors."""
    base = search_directory(scope, args.text("path", "directory", "dir"), "find_paths")
    name = args.text("name", "pattern", "iname")
    kind_arg = args.text("type", "kind")
    kind = _TYPES.get(kind_arg.strip().lower()) if kind_arg and kind_arg.strip() else None
    if kind_arg and kind_arg.strip() and kind is None:
        raise BadToolArguments(
            f"find_paths: type must be 'f' (files) or 'd' (directories), got {kind_arg!r}"
        )
    max_depth = args.integer(
        "max_depth",
        "depth",
        "maxdepth",
        default=FIND_PATHS_DEFAULT_DEPTH,
        minimum=1,
        maximum=FIND_PATHS_MAX_DEPTH,
    )
    limit = args.integer(
        "limit",
        "max_results",
        default=FIND_PATHS_DEFAULT_LIMIT,
        minimum=1,
        maximum=TOOL_MAX_RESULT_LIMIT,
    )
    prefix = f"{base}/" if base else ""
    dir_counts: Counter[str] = Counter()
    files: list[str] = []
    for path in scope.files_under(base):
        parts = path[len(prefix) :].split("/")
        for depth in range(1, min(len(parts) - 1, max_depth) + 1):
            dir_counts[prefix + "/".join(parts[:depth])] += 1
        if len(parts) <= max_depth:
            files.append(path)
    entries: list[tuple[str, int | None]] = []
    if kind != "f":
        entries.extend((path, count) for path, count in dir_counts.items())
    if kind != "d":
        entries.extend((path, None) for path in files)
    if name:
        # Case-insensitive like `find -iname`: a cheap model asking for 'readme*' wants README.md.
        named = tool_glob("find_paths: name", name.strip().replace("/", ""), ignore_case=True)
        entries = [e for e in entries if named.matches(posixpath.basename(e[0]))]
    entries.sort()
    if not entries:
        return ToolOutcome(text=f"No {_describe(kind)} found{_where(base, name, max_depth)}.")
    lines = [
        path if count is None else f"{path}/ ({count} file{'s' if count != 1 else ''})"
        for path, count in entries[:limit]
    ]
    text = "\n".join(lines)
    if len(entries) > limit:
        text += (
            f"\n[showing {limit} of {len(entries)} {_describe(kind)}"
            f"{_where(base, name, max_depth)}; narrow path/name or raise limit]"
        )
    return ToolOutcome(text=text)


def _describe(kind: str | None) -> str:
    return {"f": "files", "d": "directories"}.get(kind or "", "entries")


def _where(base: str, name: str | None, max_depth: int) -> str:
    parts = [f" under {base}/" if base else " in the workspace"]
    if name:
        parts.append(f" named {name!r}")
    parts.append(f" (max_depth={max_depth})")
    return "".join(parts)
