"""The compact directory tree placed in the stable prompt prefix.

Rendering is deterministic (same files, same text) so the cached prefix survives. When the
whole tree does not fit, the deepest level that fits is shown and directories below it are
summarised with their file count, which keeps the shape of a big monorepo visible instead of
cutting it off after the first few folders.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from live_memory.config.constants import DEFAULT_SECRET_PATH_PATTERNS
from live_memory.hygiene import is_secret_path
from live_memory.path_glob import glob_set
from live_memory.tools.listing import list_workspace_files

__all__ = ["build_directory_tree", "list_workspace_files", "render_tree"]

logger = logging.getLogger(__name__)

_INDENT = "  "
_NOTE_RESERVE = 300  # room kept for the truncation note


class _Dir:
    __slots__ = ("count", "dirs", "files", "name")

    def __init__(self, name: str) -> None:
        self.name = name
        self.dirs: dict[str, _Dir] = {}
        self.files: list[str] = []
        self.count = 0
        """Files anywhere below this directory."""


def build_directory_tree(
    root: Path,
    max_chars: int,
    *,
    secret_patterns: Sequence[str] = DEFAULT_SECRET_PATH_PATTERNS,
    file_globs: Sequence[str] = (),
) -> str:
    """An indented tree of the workspace's files, at most `max_chars` long.

    Secret files are left out; with `file_globs` only matching files are listed (see
    `live_memory.path_glob`). When truncated, a closing note says how many files are not listed.
    """
    scope = glob_set(tuple(file_globs))
    files = [
        path
        for path in list_workspace_files(root)
        if not is_secret_path(path, secret_patterns) and (not file_globs or scope.matches(path))
    ]
    return render_tree(files, max_chars)


def render_tree(files: Sequence[str], max_chars: int) -> str:
    """Render sorted-or-not relative POSIX paths as a tree of at most `max_chars` characters."""
    if max_chars <= 0:
        return ""
    if not files:
        return "(no files)"[:max_chars]
    top = _build(files)
    complete = _render(top, depth_limit=None, budget=max_chars)
    if complete is not None:
        return complete[0]
    budget = max(max_chars - _NOTE_RESERVE, 0)
    best: tuple[str, int] | None = None
    depth = 1
    while True:
        attempt = _render(top, depth_limit=depth, budget=budget)
        if attempt is None:
            break
        best = attempt
        depth += 1
    if best is None:  # even the top level is too long: cut it line by line
        text, shown = _render_cut(top, budget)
    else:
        text, shown = best
    note = (
        f"[tree truncated: {top.count - shown} of {top.count} files not "
        "listed by name; a directory shown as `name/ (N files)` was not expanded. "
        "Use find_paths or Glob to look inside.]"
    )
    return (f"{text}\n{note}" if text else note)[:max_chars]


def _build(files: Sequence[str]) -> _Dir:
    top = _Dir("")
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
                    child = node.dirs[part] = _Dir(part)
                node = child
            last_dir = directory
        node.files.append(name)
    _count(top)
    return top


def _count(top: _Dir) -> None:
    """Fill every directory's recursive file count (iteratively: trees can be deep)."""
    order: list[_Dir] = []
    stack = [top]
    while stack:
        node = stack.pop()
        order.append(node)
        stack.extend(node.dirs.values())
    for node in reversed(order):  # children before parents
        node.count = len(node.files) + sum(child.count for child in node.dirs.values())


def _collapsed(node: _Dir) -> tuple[str, _Dir]:
    """Fold a chain of single-child directories (`src/main/java/`) into one line."""
    name = node.name
    while len(node.dirs) == 1 and not node.files:
        node = next(iter(node.dirs.values()))
        name = f"{name}/{node.name}"
    return name, node


def _children(node: _Dir) -> list[_Dir | str]:
    """Directories first, then files, each sorted: the order every render uses."""
    ordered: list[_Dir | str] = [node.dirs[name] for name in sorted(node.dirs)]
    ordered.extend(sorted(node.files))
    return ordered


def _render(top: _Dir, *, depth_limit: int | None, budget: int) -> tuple[str, int] | None:
    """Render down to `depth_limit` levels (None: all); None when over `budget`.

    Returns the text and how many files it lists by name.
    """
    lines: list[str] = []
    used = 0
    shown = 0
    stack: list[tuple[_Dir | str, int]] = [(item, 0) for item in reversed(_children(top))]
    while stack:
        item, depth = stack.pop()
        indent = _INDENT * depth
        if isinstance(item, str):
            line = indent + item
            shown += 1
        else:
            name, node = _collapsed(item)
            if depth_limit is not None and depth + 1 >= depth_limit:
                line = f"{indent}{name}/ ({_files(node.count)})"
            else:
                line = f"{indent}{name}/"
                stack.extend((child, depth + 1) for child in reversed(_children(node)))
        used += len(line) + 1
        if used > budget + 1:  # the last line has no newline
            return None
        lines.append(line)
    return "\n".join(lines), shown


def _files(count: int) -> str:
    return f"{count} file" if count == 1 else f"{count} files"


def _render_cut(top: _Dir, budget: int) -> tuple[str, int]:
    """The top level only, cut after the last line that fits."""
    lines: list[str] = []
    used = 0
    shown = 0
    for item in _children(top):
        if isinstance(item, str):
            line = item
        else:
            name, node = _collapsed(item)
            line = f"{name}/ ({_files(node.count)})"
        used += len(line) + 1
        if used > budget + 1:
            break
        lines.append(line)
        shown += isinstance(item, str)
    return "\n".join(lines), shown
