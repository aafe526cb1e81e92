"""The compact directory tree placed in the stable prompt prefix.

Rendering is deterministic (same files, same text) so the cached prefix survives. A tree that
fits is shown whole, directories first, alphabetically. One that does not is budgeted by
subtree size (`live_memory.tools.tree_budget`): the big directories come first, expanded as
deep as their share allows, the rest summarised with their file counts.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path

from live_memory.config.constants import DEFAULT_SECRET_PATH_PATTERNS
from live_memory.tools.listing import list_workspace_files
from live_memory.tools.scope import Scope
from live_memory.tools.tree_budget import DirNode, collapsed, render_budgeted

__all__ = ["build_directory_tree", "list_workspace_files", "render_tree"]

logger = logging.getLogger(__name__)

_INDENT = "  "
_NOTE_RESERVE = 300  # room kept for the truncation note


def build_directory_tree(
    root: Path,
    max_chars: int,
    *,
    secret_patterns: Sequence[str] = DEFAULT_SECRET_PATH_PATTERNS,
    file_globs: Sequence[str] = (),
    vendored: bool = False,
) -> str:
    """An indented tree of the workspace's files, at most `max_chars` long.

    Secret files and git's own are left out; with `file_globs` only matching files are listed
    (see `live_memory.path_glob`); vendored directories only with `vendored`. When truncated,
    a closing note says how many files are not listed.
    """
    scope = Scope(Path(os.path.realpath(root)), tuple(secret_patterns), tuple(file_globs))
    files = list_workspace_files(root, vendored=vendored)
    hidden = scope.invisible_paths(files)
    return render_tree([path for path in files if path not in hidden], max_chars)


def render_tree(files: Sequence[str], max_chars: int) -> str:
    """Render sorted-or-not relative POSIX paths as a tree of at most `max_chars` characters."""
    if max_chars <= 0:
        return ""
    if not files:
        return "(no files)"[:max_chars]
    top = _build(files)
    complete = _render(top, budget=max_chars)
    if complete is not None:
        return complete[0]
    text, shown = render_budgeted(top, max(max_chars - _NOTE_RESERVE, 0))
    note = (
        f"[tree truncated: {top.count - shown} of {top.count} files not "
        "listed by name; directories are listed largest first with their file counts, "
        "those without entries below them were not expanded. "
        "Use find_paths or Glob to look inside.]"
    )
    return (f"{text}\n{note}" if text else note)[:max_chars]


def _build(files: Sequence[str]) -> DirNode:
    top = DirNode("")
    node = top
    last_dir: str | None = None
    for path in files:
        directory, _, name = path.rpartition("/")
        # Listings are sorted, so most files share the previous file's directory.
        if directory != last_dir:
            node = top
            for part in directory.split("/") if directory else ():
                child = node.dirs.get(part)
                if child is None:
                    child = node.dirs[part] = DirNode(part)
                node = child
            last_dir = directory
        node.files.append(name)
    _count(top)
    return top


def _count(top: DirNode) -> None:
    """Fill every directory's recursive file count (iteratively: trees can be deep)."""
    order: list[DirNode] = []
    stack = [top]
    while stack:
        node = stack.pop()
        order.append(node)
        stack.extend(node.dirs.values())
    for node in reversed(order):  # children before parents
        node.count = len(node.files) + sum(child.count for child in node.dirs.values())


def _children(node: DirNode) -> list[DirNode | str]:
    """Directories first, then files, each sorted: the order every render uses."""
    ordered: list[DirNode | str] = [node.dirs[name] for name in sorted(node.dirs)]
    ordered.extend(sorted(node.files))
    return ordered


def _render(top: DirNode, *, budget: int) -> tuple[str, int] | None:
    """Render the whole tree; None when over `budget`.

    Returns the text and how many files it lists by name.
    """
    lines: list[str] = []
    used = 0
    shown = 0
    stack: list[tuple[DirNode | str, int]] = [(item, 0) for item in reversed(_children(top))]
    while stack:
        item, depth = stack.pop()
        indent = _INDENT * depth
        if isinstance(item, str):
            line = indent + item
            shown += 1
        else:
            name, node = collapsed(item)
            line = f"{indent}{name}/"
            stack.extend((child, depth + 1) for child in reversed(_children(node)))
        used += len(line) + 1
        if used > budget + 1:  # the last line has no newline
            return None
        lines.append(line)
    return "\n".join(lines), shown
