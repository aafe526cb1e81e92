"""How pool actors are scheduled: a mailbox that schedules its actor when a message arrives,
and the bounded worker pool that runs actor slices.

A thread per workspace cost a glibc arena each, so 50 idle large workspaces kept 1.2 GB of
freed tree-build memory; a pool of `ACTOR_POOL_WORKERS` threads reuses the same few arenas.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from live_memory.config import constants as C

if TYPE_CHECKING:
    from pykka._envelope import Envelope  # pykka's internal message wrapper (typing only)

__all__ = ["Mailbox", "WorkerPool"]

logger = logging.getLogger(__name__)


class Mailbox:
    """A pykka inbox that can also schedule its actor: `put` calls `on_ready` once when the
    first message arrives for an actor that is not already scheduled (the "scheduled" flag
    makes handling serial per actor).

    Small while idle, since a server may hold thousands of loaded workspaces: no per-instance
    dict, no queue while empty (a deque holds a 64-slot block from the start), and a
    condition variable (another deque) only for an actor on a dedicated thread, which blocks
    in `get`; a pool actor never waits on its mailbox.
    """

    __slots__ = ("_items", "_lock", "_ready", "_scheduled", "on_ready")

    def __init__(self, *, blocking: bool = True) -> None:
        self._items: deque[Envelope[Any]] | None = None
        self._lock = threading.Lock()
        self._ready = threading.Condition(self._lock) if blocking else None
        self._scheduled = False
        self.on_ready: Callable[[], None] | None = None

    def put(self, envelope: Envelope[Any], /) -> None:
        with self._lock:
            if self._items is None:
                self._items = deque()
            self._items.append(envelope)
            if self._ready is not None:
                self._ready.notify()
            schedule = self.on_ready is not None and not self._scheduled
            if schedule:
                self._scheduled = True
        if schedule and self.on_ready is not None:
            self.on_ready()

    def get(self) -> Envelope[Any]:
        """Blocking take, for actors on a dedicated thread (made with `blocking=True`)."""
        if self._ready is None:
            raise RuntimeError("a pool actor's mailbox does not block")
        with self._ready:
            while not self._items:
                self._ready.wait()
            return self._pop(self._items)

    def take(self) -> Envelope[Any] | None:
        with self._lock:
            return self._pop(self._items) if self._items else None

    def _pop(self, items: deque[Envelope[Any]]) -> Envelope[Any]:
        envelope = items.popleft()
        if not items:
            self._items = None  # drop the block: an idle actor holds no queue
        return envelope

    def claim(self) -> None:
        """Mark the actor scheduled (its first slice is being submitted)."""
        with self._lock:
            self._scheduled = True

    def release(self) -> bool:
        """End a slice: True when messages are left (the actor stays scheduled)."""
        with self._lock:
            if self._items:
                return True
            self._scheduled = False
            return False

    def empty(self) -> bool:
        with self._lock:
            return not self._items

    def qsize(self) -> int:
        with self._lock:
            return len(self._items) if self._items else 0


class WorkerPool:
    """A bounded set of daemon threads running actor slices (and nothing that blocks long)."""

    def __init__(self, workers: int = C.ACTOR_POOL_WORKERS) -> None:
        self.workers = max(1, workers)
        self._jobs: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    def submit(self, job: Callable[[], None]) -> None:
        self._jobs.put(job)
        with self._lock:
            # Threads start on demand, up to the bound: a quiet server runs few of them.
            if len(self._threads) < self.workers:
                thread = threading.Thread(
                    target=self._run, name=f"actor-pool-{len(self._threads)}", daemon=True
                )
                self._threads.append(thread)
                thread.start()

    def _run(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            try:
                job()
            except Exception:  # a slice already captures handler failures; never lose a worker
                logger.exception("actor pool job failed")
            # Drop the reference while waiting: a stopped actor must be collectable.
            del job

    def threads(self) -> int:
        with self._lock:
            return len(self._threads)

    def stop(self) -> None:
        with self._lock:
            count = len(self._threads)
        for _ in range(count):
            self._jobs.put(None)
