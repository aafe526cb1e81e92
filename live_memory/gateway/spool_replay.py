"""The server drains the plugin's spool: at start, and when a session first reaches it again.

While the server is down the hooks append their bodies to `<plugin data>/spool/events.jsonl`
(plugin/scripts/notify.py): a /notify body as it is, any other route's wrapped as
`{"route": R, "body": B}`. The session-start hook names that directory on `GET /api/banner`
(`spool=DIR`) when it holds events; the server then replays it at once, remembers it in
`<data dir>/spools.json`, and replays every remembered spool (and its own data dir's) at each
start. Replays hold the hooks' own flock on `spool/.lock`, so a line is delivered exactly once
and in order: a hook that comes while the server replays waits for the lock, then finds the
spool empty. A line the server refuses (4xx) is dropped, as the hooks drop it; one it cannot
take now (shutting down) stays, with everything after it.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fcntl
import json
import logging
import os
import stat
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from live_memory.atomic_file import write_atomically
from live_memory.config import constants as C
from live_memory.errors import InputError, LiveMemoryError
from live_memory.gateway.error_map import status_for
from live_memory.regular_file import read_regular

__all__ = [
    "Replayed",
    "SpoolDrain",
    "SpoolRegistry",
    "parse_line",
    "replay_known",
    "replay_spool",
    "spool_directory",
]

logger = logging.getLogger(__name__)

NOTIFY, ENQUEUE = "/notify", "/api/enqueue"
Deliver = Callable[[str, object], Awaitable[object]]
"""Hands one body to the service as its route would (`service.notify`, `service.enqueue`)."""


@dataclass(frozen=True, slots=True)
class Replayed:
    delivered: int = 0
    refused: int = 0
    remaining: int = 0


def spool_directory(raw: str) -> Path:
    """The spool directory a client named, if it can be one; raises InputError otherwise.

    Absolute, named `spool`, a real directory (not a link) owned by the server's user: the
    server reads only `events.jsonl` in it and takes the hooks' lock file there.
    """
    path = Path(raw)
    if not path.is_absolute() or path.name != C.SPOOL_DIR_NAME:
        raise InputError(f"spool must be the absolute path of a {C.SPOOL_DIR_NAME}/ directory")
    try:
        info = path.lstat()
    except OSError as exc:
        raise InputError(f"spool {raw!r} cannot be used: {exc.strerror or exc}") from exc
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise InputError(f"spool {raw!r} is not a directory owned by the server's user")
    return path


def parse_line(line: bytes) -> tuple[str, object] | None:
    """(route, body) of one spool line; None for a line no route takes."""
    try:
        value = json.loads(line)
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    if set(value) == {"route", "body"}:
        route, body = value["route"], value["body"]
        return (route, body) if route == ENQUEUE and isinstance(body, dict) else None
    return NOTIFY, value


def _acquire(directory: Path) -> int | None:
    """The hooks' spool lock, held (its fd), or None when a hook kept it past the wait."""
    fd = os.open(directory / C.SPOOL_LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    deadline = time.monotonic() + C.SPOOL_LOCK_WAIT_S
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(fd)
                return None
            time.sleep(0.01)  # a hook holds it for milliseconds


def _read(path: Path) -> list[bytes]:
    try:
        data = read_regular(path, C.SPOOL_REPLAY_MAX_BYTES + 1, follow_symlinks=False)
    except FileNotFoundError:
        return []
    except OSError as exc:
        if exc.errno == errno.EINVAL:  # not a regular file: nothing to replay
            return []
        raise
    lines = [line for line in data[: C.SPOOL_REPLAY_MAX_BYTES].split(b"\n") if line.strip()]
    return lines[-C.SPOOL_REPLAY_MAX_LINES :]


def _rewrite(path: Path, lines: list[bytes]) -> None:
    if lines:
        write_atomically(path, b"".join(line + b"\n" for line in lines))
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


async def replay_spool(directory: Path, deliver: Deliver) -> Replayed:
    """Deliver the spool's lines in order, holding the hooks' lock; keep what could not go."""
    spool = directory / C.SPOOL_FILE_NAME
    fd = await asyncio.to_thread(_acquire, directory)
    if fd is None:
        return Replayed(remaining=-1)  # a hook is replaying it right now
    try:
        lines = await asyncio.to_thread(_read, spool)
        delivered = refused = 0
        for index, line in enumerate(lines):
            target = parse_line(line)
            if target is None:
                refused += 1
                continue
            try:
                await deliver(*target)
            except (LiveMemoryError, TimeoutError) as exc:
                if 400 <= status_for(exc) < 500:
                    refused += 1  # retrying cannot help; the hooks drop these too
                    continue
                await asyncio.to_thread(_rewrite, spool, lines[index:])
                return Replayed(delivered, refused, len(lines) - index)
            delivered += 1
        if lines:
            await asyncio.to_thread(_rewrite, spool, [])
        return Replayed(delivered, refused, 0)
    finally:
        os.close(fd)  # releases the flock


class SpoolRegistry:
    """`<data dir>/spools.json`: the spool directories sessions named, newest first, bounded."""

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / C.SPOOL_REGISTRY_FILE_NAME
        self.own = data_dir / C.SPOOL_DIR_NAME

    def known(self) -> list[Path]:
        """The remembered directories, then the data dir's own spool (hooks without plugin
        data spool there), each once."""
        try:
            listed = json.loads(read_regular(self.path))
        except (OSError, ValueError):
            listed = []
        paths = [Path(p) for p in listed if isinstance(p, str)] if isinstance(listed, list) else []
        return list(dict.fromkeys([*paths, self.own]))

    def remember(self, directory: Path) -> None:
        known = [p for p in self.known() if p != self.own]
        if known[:1] == [directory]:
            return
        kept = [directory, *[p for p in known if p != directory]][: C.SPOOL_REGISTRY_MAX]
        write_atomically(self.path, json.dumps([str(p) for p in kept]).encode() + b"\n")


async def replay_known(registry: SpoolRegistry, deliver: Deliver) -> None:
    """Replay every remembered spool that can still be used (the start-up drain)."""
    for directory in await asyncio.to_thread(registry.known):
        try:
            usable = await asyncio.to_thread(spool_directory, str(directory))
        except InputError:
            continue
        outcome = await replay_spool(usable, deliver)
        if outcome.delivered or outcome.refused:
            logger.info(
                "replayed spool %s: %d delivered, %d refused, %d kept",
                usable,
                outcome.delivered,
                outcome.refused,
                outcome.remaining,
            )


class SpoolDrain:
    """The service's side of it: replays into `service.notify` / `service.enqueue`."""

    def __init__(self, service: Any) -> None:
        self.service = service
        self.registry = SpoolRegistry(service.settings.data_dir)

    async def deliver(self, route: str, body: object) -> object:
        if route == NOTIFY:
            return await self.service.notify(body)
        return await self.service.enqueue(body)

    async def at_start(self) -> None:
        try:
            await replay_known(self.registry, self.deliver)
        except OSError:
            logger.exception("replaying the plugin spools at start failed")

    async def named(self, raw: str) -> Replayed | None:
        """A session named its spool: remember it, replay it now. None when it is unusable
        (the banner must not fail for it; the reason is logged)."""
        try:
            directory = await asyncio.to_thread(spool_directory, raw)
            await asyncio.to_thread(self.registry.remember, directory)
            return await replay_spool(directory, self.deliver)
        except (InputError, OSError) as exc:
            logger.warning("cannot replay the spool %r: %s", raw[:200], exc)
            return None
