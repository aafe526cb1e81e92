"""The actor runtime: the only module that imports pykka.

Actors subclass `Actor` and implement `handle(message)`; they are started through an
`ActorSystem`, which also keeps the inspection inventory, the shared I/O loop and the ticker.
Keeping pykka here lets the same actor classes move onto Ray later.

Every actor is a documented `pykka.ThreadingActor`: one daemon thread while it is alive, its
messages handled one at a time and in order. A workspace is a thread only while it is active
(passivation stops it, and `LIVE_MEMORY_WORKSPACES_ACTIVE_MAX` caps how many are active); the
allocator arenas those threads would each grow are capped in the service files instead
(`MALLOC_ARENA_MAX=2`, see deploy/live-memory.service).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, InvalidStateError
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

import pykka

from live_memory.actors.io_loop import IoLoop
from live_memory.config import constants as C

__all__ = [
    "Actor",
    "ActorDeadError",
    "ActorInfo",
    "ActorRef",
    "ActorSystem",
    "Promise",
    "resolve",
]

logger = logging.getLogger(__name__)

ActorRef = pykka.ActorRef
ActorDeadError = pykka.ActorDeadError
T = TypeVar("T")
Promise = Future
"""A one-shot reply slot carried inside request messages (thread-safe, asyncio-bridgeable)."""

_UNSET: Any = object()


def resolve(reply: Future[Any], value: Any = _UNSET, *, error: BaseException | None = None) -> bool:
    """Fill a reply slot once; a slot its asker cancelled (timeout, disconnect) or that was
    already filled is left alone. True if this call filled it. The one way replies are set:
    a late reply must never surface as the replying actor's failure."""
    try:
        if error is not None:
            reply.set_exception(error)
        else:
            reply.set_result(None if value is _UNSET else value)
    except InvalidStateError:
        return False
    return True


@dataclass(slots=True)
class ActorInfo:
    """What `/actors` shows about one live actor; written only by that actor's thread."""

    name: str
    kind: str
    workspace: str | None
    started_at: float = field(default_factory=time.time)
    current_message: str | None = None
    busy_since: float | None = None
    processed: int = 0
    failures: int = 0
    last_error: str | None = None
    inbox: object = None

    def as_dict(self) -> dict[str, object]:
        busy = time.monotonic() - self.busy_since if self.busy_since is not None else 0.0
        return {
            "name": self.name,
            "kind": self.kind,
            "workspace": self.workspace,
            "mailbox_depth": self.inbox.qsize() if isinstance(self.inbox, queue.Queue) else 0,
            "current_message": self.current_message,
            "busy_s": round(busy, 3),
            "processed": self.processed,
            "failures": self.failures,
            "last_error": self.last_error,
            "started_at": self.started_at,
        }


class Actor(pykka.ThreadingActor):
    """Base actor: serial message handling, failure capture, inspection bookkeeping."""

    kind: ClassVar[str] = "actor"
    use_daemon_thread = True  # a stuck handler must not keep the process from exiting

    def __init__(self, system: ActorSystem, name: str, workspace: str | None = None) -> None:
        super().__init__()
        self.system = system
        self.info = ActorInfo(name=name, kind=self.kind, workspace=workspace)

    @property
    def ref(self) -> ActorRef[Any]:
        return self.actor_ref

    def on_start(self) -> None:
        # Named for what it serves, so thread dumps and py-spy show "workspace-<root>".
        threading.current_thread().name = f"{self.kind}-{self.info.name}"
        self.info.inbox = self.actor_inbox
        self.system.register(self.actor_urn, self.info)
        self.started()

    def on_stop(self) -> None:
        try:
            self.stopped()
        finally:
            self.system.unregister(self.actor_urn)

    def on_failure(self, exc_type: Any, exc: Any, tb: Any) -> None:
        self.system.unregister(self.actor_urn)

    def started(self) -> None:
        """Hook: runs in the actor thread before the first message."""

    def stopped(self) -> None:
        """Hook: runs in the actor thread when the actor stops."""

    def on_receive(self, message: Any) -> Any:
        info = self.info
        info.current_message = type(message).__name__
        info.busy_since = time.monotonic()
        try:
            return self.handle(message)
        except Exception as exc:  # the actor-loop top level: log, record, answer the caller
            logger.exception("%s %s failed on %s", self.kind, info.name, info.current_message)
            info.failures += 1
            info.last_error = f"{type(exc).__name__}: {exc}"
            reply = getattr(message, "reply", None)
            if isinstance(reply, Future):
                resolve(reply, error=exc)
            self.failed(exc)
            return None
        finally:
            info.processed += 1
            info.current_message = None
            info.busy_since = None

    def failed(self, error: Exception) -> None:
        """Hook: a message handler raised (already logged and recorded). Supervised actors
        ask their supervisor for a restart here."""

    def handle(self, message: Any) -> Any:
        raise TypeError(f"{self.kind} does not handle {type(message).__name__}")


class ActorSystem:
    """Owns every actor of one server: start, inventory, shared I/O loop, periodic ticks."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._infos: dict[str, ActorInfo] = {}
        self.io = IoLoop()
        self._ticks: list[tuple[float, ActorRef[Any], Callable[[], object]]] = []
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._ticker: threading.Thread | None = None

    def start(self, cls: type[Actor], *args: Any, **kwargs: Any) -> ActorRef[Any]:
        ref: ActorRef[Any] = cls.start(self, *args, **kwargs)
        return ref

    def register(self, urn: str, info: ActorInfo) -> None:
        with self._lock:
            self._infos[urn] = info

    def unregister(self, urn: str) -> None:
        with self._lock:
            self._infos.pop(urn, None)

    def busy(self, ref: ActorRef[Any]) -> tuple[str, float] | None:
        """(the message in hand, seconds on it) of the actor behind `ref`; None when idle."""
        with self._lock:
            info = self._infos.get(ref.actor_urn)
        since = info.busy_since if info is not None else None
        if info is None or since is None:
            return None
        return info.current_message or "?", time.monotonic() - since

    def inventory(self) -> list[dict[str, object]]:
        with self._lock:
            infos = list(self._infos.values())
        return [i.as_dict() for i in sorted(infos, key=lambda i: (i.kind, i.name))]

    def every(self, interval_s: float, ref: ActorRef[Any], make: Callable[[], object]) -> None:
        """Tell `ref` a fresh `make()` message every `interval_s` seconds."""
        with self._lock:
            self._ticks.append((interval_s, ref, make))
            self._wake.set()  # a new, possibly shorter, interval: recompute the next wake-up
            if self._ticker is None:
                self._ticker = threading.Thread(target=self._tick_loop, name="ticker", daemon=True)
                self._ticker.start()

    def _tick_loop(self) -> None:
        due: dict[int, float] = {}
        while not self._stop.is_set():
            now = time.monotonic()
            with self._lock:
                ticks = list(self._ticks)
            wait = C.KEEP_WARM_TICK_S
            for i, (interval, ref, make) in enumerate(ticks):
                nxt = due.setdefault(i, now + interval)
                if now >= nxt:
                    due[i] = now + interval
                    try:
                        ref.tell(make())
                    except ActorDeadError:
                        logger.debug("tick target is gone")
                wait = min(wait, max(due[i] - now, 0.01))
            self._wake.wait(wait)
            self._wake.clear()

    def shutdown(self, timeout: float = C.ACTOR_STOP_TIMEOUT_S) -> None:
        """Stop the ticker, every actor (newest first) and the I/O loop."""
        self._stop.set()
        self._wake.set()
        pykka.ActorRegistry.stop_all(block=True, timeout=timeout)
        self.io.stop()
