"""The window's files by path, with the running totals the budget reads in O(1).

Every change to an entry adjusts the totals by that entry alone, so the budget never walks the
manifest: the characters a freeze would render for held file content (`block_chars`) and for
the manifest (`manifest_chars`), and the bytes of observed content held (`held_bytes`, the
quantity the per-workspace held-bytes cap bounds). Held and bare entries are also kept in
least-recently-set order, so shedding at ingest takes the oldest in O(1).

The same module owns how one file is shown in the prompt (its block and its manifest line), so
the totals and the rendering cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, MutableMapping
from typing import Final

from live_memory.memory.model import FileContext, FileState

__all__ = ["STATE_NOTE", "FileTable", "block_chars", "file_block", "line_chars", "manifest_line"]

STATE_NOTE: Final[dict[FileState, str]] = {
    "current": "",
    "stale": " — CHANGED since you read it; re-read before relying on it",
    "deleted": " — DELETED or moved/renamed; it no longer exists at this path",
}
_FENCE_CLOSE: Final = "\n```"


def _header(ctx: FileContext) -> str:
    return f"### {ctx.path} ({ctx.size} bytes, sha256 {ctx.sha256[:12]})\n```\n"


def file_block(ctx: FileContext) -> str:
    """A held file as the prompt shows it (fenced, with size and hash)."""
    return f"{_header(ctx)}{ctx.content}{_FENCE_CLOSE}"


def block_chars(ctx: FileContext) -> int:
    """len(file_block(ctx)) without building it; 0 for an entry that renders no block."""
    if not ctx.content:
        return 0
    return len(_header(ctx)) + len(ctx.content) + len(_FENCE_CLOSE)


def manifest_line(path: str, state: FileState) -> str:
    return f"- {path}{STATE_NOTE[state]}"


def line_chars(path: str, state: FileState) -> int:
    """len(manifest_line(...)) plus its newline."""
    return 3 + len(path) + len(STATE_NOTE[state])


def _held(ctx: FileContext) -> bool:
    """Observed content the held-bytes cap applies to (preloads have their own cap)."""
    return ctx.content is not None and ctx.source != "preloaded"


class FileTable(MutableMapping[str, FileContext]):
    """A dict of path -> FileContext that keeps its budget totals current."""

    __slots__ = (
        "_bare",
        "_held",
        "_items",
        "block_chars",
        "blocks",
        "held_bytes",
        "manifest_chars",
        "preloaded_block_chars",
        "preloaded_blocks",
    )

    def __init__(
        self, items: Mapping[str, FileContext] | Iterable[tuple[str, FileContext]] = ()
    ) -> None:
        self._items: dict[str, FileContext] = {}
        self._held: dict[str, None] = {}
        """Paths holding observed content, least recently set first."""
        self._bare: dict[str, None] = {}
        """Paths without content, least recently set first."""
        self.block_chars = 0
        """Characters of every file block a freeze renders (preloaded ones included)."""
        self.blocks = 0
        self.preloaded_block_chars = 0
        self.preloaded_blocks = 0
        self.manifest_chars = 0
        """Characters of the manifest lines, one newline each."""
        self.held_bytes = 0
        self.update(items)

    # --- the mapping ---------------------------------------------------------------------
    def __getitem__(self, path: str) -> FileContext:
        return self._items[path]

    def __setitem__(self, path: str, ctx: FileContext) -> None:
        old = self._items.get(path)
        if old is not None:
            self._remove(old)
        self._items[path] = ctx
        self._add(ctx)

    def __delitem__(self, path: str) -> None:
        self._remove(self._items.pop(path))

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, path: object) -> bool:
        return path in self._items

    def get(self, path: str, default: FileContext | None = None) -> FileContext | None:  # type: ignore[override]
        return self._items.get(path, default)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FileTable):
            return self._items == other._items
        if isinstance(other, Mapping):
            return self._items == dict(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"FileTable({self._items!r})"

    def copy(self) -> FileTable:
        """An independent table (entries are immutable, so sharing them is safe)."""
        clone = FileTable.__new__(FileTable)
        clone._items = dict(self._items)
        clone._held = dict(self._held)
        clone._bare = dict(self._bare)
        for name in (
            "block_chars",
            "blocks",
            "preloaded_block_chars",
            "preloaded_blocks",
            "manifest_chars",
            "held_bytes",
        ):
            setattr(clone, name, getattr(self, name))
        return clone

    # --- least recently set --------------------------------------------------------------
    def oldest_held(self) -> str | None:
        """The path holding observed content that was set longest ago (None: none held)."""
        return next(iter(self._held), None)

    def oldest_bare(self) -> str | None:
        """The content-less entry that was set longest ago (None: there is none)."""
        return next(iter(self._bare), None)

    @property
    def held_count(self) -> int:
        return len(self._held)

    # --- totals --------------------------------------------------------------------------
    def _count(self, ctx: FileContext, sign: int) -> None:
        chars = block_chars(ctx)
        if chars:
            self.block_chars += sign * chars
            self.blocks += sign
            if ctx.source == "preloaded":
                self.preloaded_block_chars += sign * chars
                self.preloaded_blocks += sign

    def _add(self, ctx: FileContext) -> None:
        self._count(ctx, 1)
        self.manifest_chars += line_chars(ctx.path, ctx.state)
        if _held(ctx):
            self.held_bytes += ctx.size
            self._held[ctx.path] = None
        elif ctx.content is None:
            self._bare[ctx.path] = None

    def _remove(self, ctx: FileContext) -> None:
        self._count(ctx, -1)
        self.manifest_chars -= line_chars(ctx.path, ctx.state)
        if _held(ctx):
            self.held_bytes -= ctx.size
        self._held.pop(ctx.path, None)
        self._bare.pop(ctx.path, None)
