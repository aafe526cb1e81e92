"""The workspace actor's side of the structural index: open it, feed it, read it.

Feeding is fire-and-forget (`SymbolIndexes.submit` appends to a bounded queue read by the
index thread), so notifications and commits never wait on a parse.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from live_memory.agent import CoreMap, Retriever, Services, SymbolRetriever, has_core_map
from live_memory.config import constants as C
from live_memory.index import WorkspaceIndex, render_core_map
from live_memory.workspace import FileEvent

__all__ = [
    "core_map_of",
    "index_covers",
    "index_events",
    "index_paths",
    "open_index",
    "release_index",
    "retrievers_of",
]


def open_index(services: Services, path: Path) -> WorkspaceIndex | None:
    symbols = services.stores.symbols
    if symbols is None:
        return None
    settings = services.settings
    return symbols.open(
        path,
        secret_patterns=tuple(settings.secret_path_patterns),
        file_globs=tuple(settings.file_globs),
    )


def release_index(services: Services, index: WorkspaceIndex | None) -> None:
    symbols = services.stores.symbols
    if symbols is not None and index is not None:
        symbols.release(index.root)


def index_events(
    services: Services, index: WorkspaceIndex | None, events: Iterable[FileEvent]
) -> None:
    """Teed content, hook notifications and watcher events, as incremental updates."""
    symbols = services.stores.symbols
    if symbols is None or index is None:
        return
    for event in events:
        content = event.content.encode("utf-8") if event.content is not None else None
        symbols.submit(index, event.path, content)


def index_paths(services: Services, index: WorkspaceIndex | None, paths: Iterable[str]) -> None:
    """Files the tools read for a question (re-checked by content hash)."""
    symbols = services.stores.symbols
    if symbols is None or index is None:
        return
    for path in dict.fromkeys(paths):
        symbols.submit(index, path)


def core_map_of(index: WorkspaceIndex | None, *, first: bool = False) -> CoreMap | None:
    """The core map renderer for the stable prefix; on a workspace's first tree build it
    waits a moment for the first pass, so a small repository starts with a full map."""
    if index is None:
        return None
    if first:
        index.completed.wait(C.CORE_MAP_FIRST_WAIT_S)
    return lambda max_chars: render_core_map(index.store, max_chars)


def retrievers_of(index: WorkspaceIndex | None) -> tuple[Retriever, ...]:
    return (SymbolRetriever(index),) if index is not None else ()


def index_covers(index: WorkspaceIndex | None, tree: str, *, map_partial: bool) -> bool:
    """Whether the structural index grounds the workspace, so the cold guard stays quiet: the
    index's first pass over the workspace had completed when the core map now in `tree` (the
    stable prefix) was rendered, and that map is there, so the index parsed source files
    with definitions. A docs-only workspace (no core map), an index still indexing, or no
    index at all leave the memory cold until content is held."""
    return index is not None and index.complete and not map_partial and has_core_map(tree)
