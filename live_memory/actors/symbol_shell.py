"""The workspace actor's side of the structural index: open it, feed it, read it.

Feeding is fire-and-forget (`SymbolIndexes.submit` appends to a bounded queue read by the
index thread), so notifications and commits never wait on a parse.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from pathlib import Path

from live_memory.agent import CoreMap, Retriever, Services, SymbolRetriever, has_core_map
from live_memory.config import constants as C
from live_memory.index import WorkspaceIndex, render_core_map
from live_memory.workspace import FileEvent

__all__ = [
    "TeedMemo",
    "core_map_of",
    "discard_index",
    "index_covers",
    "index_events",
    "index_paths",
    "open_index",
    "release_index",
    "retrievers_of",
]

logger = logging.getLogger(__name__)


def open_index(services: Services, path: Path) -> WorkspaceIndex | None:
    symbols = services.stores.symbols
    if symbols is None:
        return None
    settings = services.settings
    return symbols.open(
        path,
        secret_patterns=tuple(settings.secret_path_patterns),
        file_globs=tuple(settings.file_globs),
        vendored=settings.include_vendored,
    )


def release_index(services: Services, index: WorkspaceIndex | None) -> None:
    symbols = services.stores.symbols
    if symbols is not None and index is not None:
        symbols.release(index.root)


def discard_index(services: Services, index: WorkspaceIndex | None) -> None:
    """Release `index` and delete its database (`empty`); a file that cannot be deleted
    is logged, not raised: the memory is wiped either way."""
    symbols = services.stores.symbols
    if symbols is None or index is None:
        return
    try:
        if not symbols.discard(index):
            logger.warning("symbol index of %s is shared: kept", index.root)
    except OSError:
        logger.exception("symbol index of %s could not be deleted", index.root)


class TeedMemo:
    """Which bytes the index was last handed per teed path (their hash), so a file teed
    again unchanged — an agent re-reading it, hooks re-sending it — costs no index update.

    Each update is a hand-off to the index thread, its no-op check (realpath, a SQLite
    stamp, stat, SHA-256) and the GIL traffic between the threads: per /notify it cost more
    CPU than the request itself (hey, a new connection per request: 0.8 ms of 1.9 ms).
    Any update of a path from disk (an event without content, a tool's read, a rescan)
    forgets the path, so the next teed bytes go to the index again. At most
    INDEX_TEED_MEMO_MAX paths (oldest forgotten first); a hash collision only delays one
    update until the file changes again."""

    __slots__ = ("_prefix", "_seen")

    def __init__(self, root: str) -> None:
        self._prefix = root.rstrip(os.sep) + os.sep
        self._seen: dict[str, int] | None = None  # none held while the workspace only asks

    def _key(self, path: str) -> str:
        """One spelling per file: hooks send absolute paths, tools relative ones."""
        if path.startswith(self._prefix):
            path = path[len(self._prefix) :]
        return os.path.normpath(path)

    def fresh(self, path: str, content: str) -> bool:
        """True when `content` is not what the index was last handed for `path`."""
        seen = self._seen
        if seen is None:
            seen = self._seen = {}
        path = self._key(path)
        digest = hash(content)
        if seen.get(path) == digest:
            return False
        seen.pop(path, None)
        if len(seen) >= C.INDEX_TEED_MEMO_MAX:
            seen.pop(next(iter(seen)))
        seen[path] = digest
        return True

    def forget(self, path: str | None = None) -> None:
        """Forget `path`, or every path."""
        if self._seen is not None:
            if path is None:
                self._seen = None
            else:
                self._seen.pop(self._key(path), None)


def index_events(
    services: Services,
    index: WorkspaceIndex | None,
    events: Iterable[FileEvent],
    memo: TeedMemo,
) -> None:
    """Teed content, hook notifications and watcher events, as incremental updates."""
    symbols = services.stores.symbols
    if symbols is None or index is None:
        return
    for event in events:
        if event.content is None:
            memo.forget(event.path)
            symbols.submit(index, event.path)
        elif memo.fresh(event.path, event.content) and not symbols.submit(
            index, event.path, event.content.encode("utf-8")
        ):
            memo.forget(event.path)  # dropped (queue full): not handed over after all


def index_paths(
    services: Services, index: WorkspaceIndex | None, paths: Iterable[str], memo: TeedMemo
) -> None:
    """Files the tools read for a question (re-checked by content hash)."""
    symbols = services.stores.symbols
    if symbols is None or index is None:
        return
    for path in dict.fromkeys(paths):
        memo.forget(path)
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
