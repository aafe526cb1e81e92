"""The Glob tool: workspace files whose path matches a glob, sorted by path."""

from __future__ import annotations

import logging
import os

from live_memory.config.constants import GLOB_DEFAULT_LIMIT, TOOL_MAX_RESULT_LIMIT
from live_memory.tools.arguments import BadToolArguments, ToolArgs, tool_glob
from live_memory.tools.outcome import ToolOutcome
from live_memory.tools.scope import Scope

__all__ = ["run_glob", "search_directory"]

logger = logging.getLogger(__name__)


def run_glob(scope: Scope, args: ToolArgs) -> ToolOutcome:
    """Glob{pattern, path?, limit?}; raises the jail's and the arguments' errors."""
    pattern = args.required_text("pattern", "file_pattern", "glob")
    limit = args.integer(
        "limit", "max_results", default=GLOB_DEFAULT_LIMIT, minimum=1, maximum=TOOL_MAX_RESULT_LIMIT
    )
    base = search_directory(scope, args.text("path", "directory", "dir"), "Glob")
    pattern = _relative_pattern(scope, pattern)
    glob = tool_glob("Glob", pattern)
    prefix = f"{base}/" if base else ""
    matches = [path for path in scope.files_under(base) if glob.matches(path[len(prefix) :])]
    where = f" under {base}/" if base else ""
    if not matches:
        return ToolOutcome(
            text=f"No files match {pattern!r}{where}. A pattern without '/' matches file names "
            "at any depth (e.g. '*.py'); use '**/' to cross directories."
        )
    shown = matches[:limit]
    text = "\n".join(shown)
    if len(matches) > limit:
        text += (
            f"\n[showing {limit} of {len(matches)} files matching {pattern!r}{where}; "
            "narrow the pattern or path, or raise limit]"
        )
    return ToolOutcome(text=text)


def search_directory(scope: Scope, path: str | None, tool: str) -> str:
    """Jail a directory argument and return its workspace-relative form ('' = root)."""
    resolved, rel = scope.locate(path)
    if not resolved.is_dir():
        kind = "does not exist" if not resolved.exists() else "is not a directory"
        shown = path if path and path.strip() else "."
        raise BadToolArguments(f"{tool}: path {shown!r} {kind}; pass a directory in the workspace")
    return rel


def _relative_pattern(scope: Scope, pattern: str) -> str:
    """Accept an absolute pattern that starts at the workspace root (models often send one)."""
    pattern = pattern.strip()
    if not os.path.isabs(pattern):
        return pattern
    root = str(scope.root).rstrip("/") + "/"
    if pattern.startswith(root):
        return pattern[len(root) :]
    raise BadToolArguments(
        f"Glob: pattern {pattern!r} is absolute and outside the workspace; "
        "use a pattern relative to the workspace root, e.g. 'src/**/*.py'"
    )
