"""Spending a directory tree's character budget where the files are.

Cutting every directory at one depth wastes the budget on a repository whose size sits in
a few places (a 38k-file docs repository used 9 KB of 80 KB; a 62k-file directory first
appeared at line 3,076). Instead:

1. every directory's full cost (its children's lines and everything below) and shallow
   cost (its children's lines only) are computed bottom-up;
2. the budget flows top-down: a directory that fits whole is shown whole; one whose
   children's lines fit shows them all and shares what is left among its subdirectories in
   proportion to their file counts (water-filling: a small subtree takes only what it needs
   and the rest goes to the big ones); one whose children do not fit shows its largest
   subdirectories first, then files, then `… N more entries (M files)`;
3. within a truncated tree directories are ordered by size, so the big top-level ones come
   first; every directory line carries its file count.

Everything is iterative (a 10,000-level tree has no recursion to exhaust) and deterministic.
"""

from __future__ import annotations

__all__ = ["DirNode", "collapsed", "render_budgeted"]

_INDENT = "  "


class DirNode:
    """One directory of the listing: its subdirectories, its own files, and the number of
    files anywhere below it."""

    __slots__ = ("count", "dirs", "files", "name")

    def __init__(self, name: str) -> None:
        self.name = name
        self.dirs: dict[str, DirNode] = {}
        self.files: list[str] = []
        self.count = 0


def _files(count: int) -> str:
    return f"{count} file" if count == 1 else f"{count} files"


def collapsed(node: DirNode) -> tuple[str, DirNode]:
    """Fold a chain of single-child directories (`src/main/java/`) into one line."""
    name = node.name
    while len(node.dirs) == 1 and not node.files:
        node = next(iter(node.dirs.values()))
        name = f"{name}/{node.name}"
    return name, node


_Child = tuple[str, DirNode | None]
"""(line text without indent, the collapsed directory it names or None for a file)."""


def _ordered(node: DirNode) -> list[_Child]:
    dirs = [collapsed(d) for d in node.dirs.values()]
    dirs.sort(key=lambda item: (-item[1].count, item[0]))
    children: list[_Child] = [(f"{name}/ ({_files(end.count)})", end) for name, end in dirs]
    children.extend((name, None) for name in sorted(node.files))
    return children


def _tail(indent: str, entries: int, files: int) -> str:
    return f"{indent}… {entries} more entries ({_files(files)})"


def render_budgeted(top: DirNode, budget: int) -> tuple[str, int]:
    """The tree below `top` in at most `budget` characters; (text, files listed by name)."""
    children: dict[int, list[_Child]] = {}
    depth: dict[int, int] = {id(top): 0}
    order: list[DirNode] = []
    stack = [top]
    while stack:  # top-down: children lists and depths
        node = stack.pop()
        order.append(node)
        items = children[id(node)] = _ordered(node)
        for _, end in items:
            if end is not None:
                depth[id(end)] = depth[id(node)] + 1
                stack.append(end)
    shallow: dict[int, int] = {}
    need: dict[int, int] = {}
    for node in reversed(order):  # bottom-up: costs
        width = len(_INDENT) * depth[id(node)]
        items = children[id(node)]
        shallow[id(node)] = sum(width + len(text) + 1 for text, _ in items)
        need[id(node)] = shallow[id(node)] + sum(need[id(e)] for _, e in items if e is not None)

    shown: dict[int, list[_Child]] = {}
    tails: dict[int, str] = {}
    pending = [(top, budget)]
    while pending:  # top-down: spend the budget
        node, room = pending.pop()
        key = id(node)
        items = children[key]
        indent = _INDENT * depth[key]
        if room >= need[key]:
            shown[key] = items
            pending.extend((e, need[id(e)]) for _, e in items if e is not None)
        elif room >= shallow[key]:
            shown[key] = items
            pending.extend(_share(items, room - shallow[key], need))
        else:
            picked, tail = _partial(items, indent, room)
            if picked:  # else not even one entry fits: the directory's own line says enough
                shown[key] = picked
                if tail:
                    tails[key] = tail

    return _emit(top, shown, tails, depth)


def _partial(items: list[_Child], indent: str, room: int) -> tuple[list[_Child], str]:
    """The leading entries that fit in `room` together with the `… N more` line."""
    files_from = [0] * (len(items) + 1)  # files in items[i:], for the tail line
    for i in range(len(items) - 1, -1, -1):
        end = items[i][1]
        files_from[i] = files_from[i + 1] + (1 if end is None else end.count)
    used = 0
    taken = 0
    for i, (text, _) in enumerate(items):
        cost = len(indent) + len(text) + 1
        rest = len(items) - i - 1
        tail_cost = len(_tail(indent, rest, files_from[i + 1])) + 1 if rest else 0
        if used + cost + tail_cost > room:
            break
        used += cost
        taken += 1
    left = len(items) - taken
    tail = _tail(indent, left, files_from[taken]) if left and taken else ""
    return items[:taken], tail


def _share(items: list[_Child], pool: int, need: dict[int, int]) -> list[tuple[DirNode, int]]:
    """Split `pool` among the directories in `items` by file count; none gets more than it
    needs, and what a small one leaves goes to the bigger ones."""
    dirs = [e for _, e in items if e is not None]
    dirs.sort(key=lambda e: need[id(e)] / max(e.count, 1))
    weight = sum(max(e.count, 1) for e in dirs)
    grants: list[tuple[DirNode, int]] = []
    for end in dirs:
        share = pool * max(end.count, 1) // max(weight, 1)
        grant = min(need[id(end)], share)
        grants.append((end, grant))
        pool -= grant
        weight -= max(end.count, 1)
    return grants


def _emit(
    top: DirNode, shown: dict[int, list[_Child]], tails: dict[int, str], depth: dict[int, int]
) -> tuple[str, int]:
    lines: list[str] = []
    listed = 0
    stack: list[tuple[DirNode | None, str]] = [(top, "")]
    while stack:
        node, line = stack.pop()
        if line:
            lines.append(line)
        if node is None:
            continue
        key = id(node)
        indent = _INDENT * depth[key]
        batch: list[tuple[DirNode | None, str]] = []
        for text, end in shown.get(key, ()):
            if end is None:
                listed += 1
                batch.append((None, indent + text))
            else:
                batch.append((end if id(end) in shown else None, indent + text))
        if key in tails:
            batch.append((None, tails[key]))
        stack.extend(reversed(batch))
    return "\n".join(lines), listed
