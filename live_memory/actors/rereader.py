"""The shell's side of re-reading held files: the reads themselves, off the actor.

A `ReadFiles` effect becomes one task on the I/O loop: it waits for the batch's `not_before`
(the per-interval cap, paced without holding the actor), reads every path in a worker thread
through the Read tool's own path (`read_workspace_text`: the jail, secret files refused,
binary refused, redaction), capped at what the window would hold, and reports the batch back
to the workspace as one `RereadDone` message. No model call, no tokens; the actor only ever
sees the finished results, so neither questions nor `/notify` wait on the disk.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from live_memory.actors.runtime import ActorDeadError, ActorRef, ActorSystem
from live_memory.config import constants as C
from live_memory.errors import LiveMemoryError
from live_memory.memory import Reread
from live_memory.tools import UnreadableFile, read_workspace_text
from live_memory.workspace import ReadFiles

__all__ = ["RereadDone", "reread_file", "start_rereads"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class RereadDone:
    """To a workspace: the results of one `ReadFiles` batch, one per path, in order."""

    results: tuple[Reread, ...]


def reread_file(
    root: Path, rel: str, ticket: int, *, max_bytes: int, secret_patterns: Sequence[str]
) -> Reread:
    """Read `rel` as the model's Read tool would; never raises."""
    try:
        text, read = read_workspace_text(
            root, rel, max_bytes=max_bytes, secret_patterns=secret_patterns
        )
    except UnreadableFile as exc:
        if exc.reason == "missing":
            return Reread(rel, ticket, "missing", reason=exc.reason)
        return Reread(rel, ticket, "unreadable", reason=exc.reason)
    except (LiveMemoryError, OSError, ValueError) as exc:  # outside the jail now, EIO, ...
        return Reread(rel, ticket, "unreadable", reason=type(exc).__name__)
    return Reread(rel, ticket, "content", text, read.sha256, read.size)


def read_batch(
    root: Path, batch: ReadFiles, *, max_bytes: int, secret_patterns: Sequence[str]
) -> tuple[Reread, ...]:
    return tuple(
        reread_file(root, rel, ticket, max_bytes=max_bytes, secret_patterns=secret_patterns)
        for rel, ticket in batch.paths
    )


async def _paced(
    root: Path, batch: ReadFiles, max_bytes: int, secret_patterns: Sequence[str]
) -> tuple[Reread, ...]:
    delay = batch.not_before - time.monotonic()
    if delay > 0:
        await asyncio.sleep(delay)
    return await asyncio.to_thread(
        read_batch, root, batch, max_bytes=max_bytes, secret_patterns=secret_patterns
    )


def _outcome(batch: ReadFiles, future: Future[tuple[Reread, ...]]) -> RereadDone:
    try:
        return RereadDone(future.result())
    except BaseException as exc:  # cancelled at shutdown, a thread pool gone: stale, not lost
        logger.warning("re-reading %d file(s) failed: %s", len(batch.paths), exc)
        return RereadDone(
            tuple(Reread(p, t, "unreadable", reason="failed") for p, t in batch.paths)
        )


def start_rereads(
    system: ActorSystem,
    ref: ActorRef[Any],
    root: Path,
    batch: ReadFiles,
    *,
    max_file_bytes: int,
    secret_patterns: Sequence[str],
) -> None:
    """Run `batch` on the I/O loop; its results come back to `ref` as `RereadDone`."""
    max_bytes = min(C.READ_MAX_FILE_BYTES, max_file_bytes)
    future = system.io.submit(_paced(root, batch, max_bytes, tuple(secret_patterns)))

    def report(done: Future[tuple[Reread, ...]]) -> None:
        try:
            ref.tell(_outcome(batch, done))
        except ActorDeadError:  # passivated meanwhile: the next incarnation re-checks hashes
            logger.debug("re-read results for a stopped workspace dropped")

    future.add_done_callback(report)
