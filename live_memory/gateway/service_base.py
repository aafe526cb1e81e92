"""The service's long-lived parts: the stores, the actor system, the workspace handle cache.

`LiveMemoryService` (service.py) builds on this; every workspace request goes through `_send`.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, Protocol, TypeVar

from live_memory.actors import (
    ActorDeadError,
    ActorRef,
    ActorSystem,
    Answer,
    AttachWatcher,
    DrainTranscripts,
    GatewayActor,
    KeepWarmActor,
    Notify,
    Route,
    SweepIdle,
    WatchdogActor,
    keep_warm_config,
)
from live_memory.agent import Services, Stores, build_services
from live_memory.config import Settings
from live_memory.config import constants as C
from live_memory.data_disk import DataDisk
from live_memory.errors import AnswerNotPersisted, InputError, LiveMemoryError
from live_memory.gateway import ask_arguments
from live_memory.gateway.blocking import BlockingCalls
from live_memory.gateway.bridge import wait_reply
from live_memory.gateway.jobs import JobRunner
from live_memory.gateway.notify_batch import NotifyBacklog, NotifyBatch
from live_memory.index import SymbolIndexes
from live_memory.knowledge import EndpointNotes, FactStore, TranscriptQueue, UsageLedger
from live_memory.memory import Snapshots, SnapshotStore
from live_memory.watchers import WatcherBoard
from live_memory.workspace import FileEvent

__all__ = ["ServiceBase"]

logger = logging.getLogger(__name__)
T = TypeVar("T")


class _Gateway(Protocol):
    """Where the edge sends workspace messages: the local GatewayActor, or the Ray router."""

    def tell(self, message: Any) -> None: ...


class ServiceBase:
    """The stores and actors of one app, and the routing of messages to workspace actors."""

    def __init__(self, settings: Settings, *, store: Snapshots | None = None) -> None:
        self.settings = settings
        self.started_at = time.time()
        self.disk = DataDisk(settings.data_dir)
        """Whether the data directory can be written (/health)."""
        self.stores = Stores(
            UsageLedger(settings.data_dir / C.USAGE_FILE_NAME),
            TranscriptQueue(settings.data_dir / C.TRANSCRIPT_QUEUE_FILE_NAME),
            FactStore(
                settings.data_dir / C.FACT_STORE_FILE_NAME,
                max_facts=settings.max_stored_facts,
                retire_after_s=settings.fact_retire_after_s,
            ),
            symbols=SymbolIndexes(settings.data_dir) if settings.symbol_index else None,
            endpoints=EndpointNotes(settings.data_dir / C.ENDPOINT_NOTES_FILE_NAME),
        )
        recovered = self.stores.transcripts.recover()
        dropped = self.stores.transcripts.gc_sessions(C.TRANSCRIPT_KEEP_SESSIONS)
        if recovered or dropped:
            logger.info(
                "transcript queue: %d recovered, %d old sessions dropped", recovered, dropped
            )
        self.services: Services = build_services(settings, self.stores)
        self.store: Snapshots = store or SnapshotStore(settings.snapshot_dir)
        self.system = ActorSystem()
        self.watcher: ActorRef[Any] | None = None
        self.watcher_board = WatcherBoard()
        self.keep_warm: ActorRef[Any] | None = None
        self.router: Any = None
        """The Ray backend's router (None: the local backend)."""
        self.reply_timeout_s = C.EDGE_REPLY_TIMEOUT_S
        if settings.backend == "ray":
            # Workspace actors, their keep-warm and watcher live on the cluster (docs/SCALING.md).
            from live_memory.ray_backend import RayRouter, connect  # noqa: PLC0415

            connect(settings)
            self.router = RayRouter(settings, self.store, self.system.io)
            self.gateway: _Gateway = self.router
            self.reply_timeout_s = C.RAY_EDGE_REPLY_TIMEOUT_S  # an actor may be (re)starting
        else:
            gateway = self.system.start(GatewayActor, services=self.services, store=self.store)
            self.gateway = gateway
            idle_s = settings.passivate_after_s
            self.system.every(
                min(C.PASSIVATION_SWEEP_S, idle_s / 2), gateway, lambda: SweepIdle(idle_s)
            )
            self.keep_warm = self.system.start(
                KeepWarmActor, gateway=gateway, config=keep_warm_config(self.services)
            )
            if settings.watcher == "os":
                self.watcher = self.system.start(
                    WatchdogActor, gateway=gateway, settings=settings, board=self.watcher_board
                )
                gateway.tell(AttachWatcher(self.watcher))
        self.closing = False
        self.blocking = BlockingCalls()
        """SQLite and file-system calls of the edge: never on the event loop."""
        self._asking: set[Future[Answer]] = set()
        """Reply slots of questions in flight (the SIGTERM drain waits on them)."""
        self.jobs = JobRunner()
        self._handles: weakref.WeakValueDictionary[str, ActorRef[Any]] = (
            weakref.WeakValueDictionary()
        )
        """cwd -> weak workspace actor handle (written from the gateway's thread: single dict
        ops). Weak, so a passivated actor's mailbox is freed with it instead of living on here;
        one shared callback drops a dead entry (a closure per cwd cost ~320 B an active one)."""
        self._batch = NotifyBatch()
        self._backlog = NotifyBacklog()
        """Content told to each held actor, not yet known applied (gateway/notify_batch)."""
        """Held workspaces' notifications not yet told (gateway/notify_batch; loop only)."""
        self._batch_timer: asyncio.TimerHandle | None = None
        for root in self.stores.transcripts.workspaces_with_pending():
            self.gateway.tell(Route(root, DrainTranscripts()))

    # --- workspace requests --------------------------------------------------------------
    async def _call(
        self,
        cwd: object,
        make: Callable[[Future[T]], Any],
        *,
        activate: bool = True,
        timeout_s: float | None = None,
    ) -> T:
        reply: Future[T] = Future()
        self._send(ask_arguments.cwd(cwd), make(reply), activate=activate)
        return await self._reply(reply, max(timeout_s or 0.0, self.reply_timeout_s))

    async def _reply(self, reply: Future[T], timeout_s: float) -> T:
        """A workspace's reply; a failure for want of storage, however a store wrapped it, is
        raised as StorageFull (507) and kept for /health. Raises what the workspace set,
        or TimeoutError."""
        try:
            return await wait_reply(reply, timeout_s)
        except LiveMemoryError as exc:
            if isinstance(exc, InputError):  # the caller's doing, never the disk's
                raise
            full = await self.blocking.run(self.disk.explain, exc)
            if full is None or full is exc or isinstance(exc, AnswerNotPersisted):
                raise  # not the disk, or a 507 already (one that carries its answer)
            raise full from exc

    def _send(self, cwd: str, message: Any, *, activate: bool = True) -> None:
        """Tell the workspace for `cwd`: directly on a remembered handle, else through the
        gateway, which resolves the name, activates the actor and hands back its handle.
        Gathered notifications go first (for every name: two names may be one workspace)."""
        if self._batch:
            self.flush_notifications()
        if self._tell_held(cwd, message):
            return
        self._route(cwd, message, activate=activate)

    def _route(self, cwd: str, message: Any, *, activate: bool) -> None:
        handle: Future[ActorRef[Any]] = Future()
        handle.add_done_callback(lambda f: self._remember(cwd, f))
        self.gateway.tell(Route(cwd, message, activate_unknown=activate, handle=handle))

    def _tell_held(self, cwd: str, message: Any) -> bool:
        """Tell the workspace for `cwd` on the handle this edge remembers; False when there
        is none (never seen, passivated, restarted, or the Ray backend, which hands none)."""
        ref = self._handles.get(cwd)
        if ref is None:
            return False
        try:
            ref.tell(message)
        except ActorDeadError:  # passivated or restarted: the gateway resolves it again
            self._forget(cwd, ref)
            return False
        return True

    def _gather_held(self, cwd: str, events: tuple[FileEvent, ...]) -> bool:
        """Gather a notification for a workspace this edge holds a live handle for, to be
        told with the others within NOTIFY_BATCH_DELAY_S; False when it holds none. On the
        event loop only."""
        ref = self._handles.get(cwd)
        if ref is None or not ref.is_alive():
            return False
        if self._batch.add(cwd, events):
            self.flush_notifications()
        elif self._batch_timer is None:
            loop = asyncio.get_running_loop()
            self._batch_timer = loop.call_later(C.NOTIFY_BATCH_DELAY_S, self.flush_notifications)
        return True

    def flush_notifications(self) -> None:
        """Tell every gathered notification to its workspace, in arrival order. One that
        stopped meanwhile (passivated) gets it through the gateway, like an unheld name."""
        if self._batch_timer is not None:
            self._batch_timer.cancel()
            self._batch_timer = None
        for cwd, events in self._batch.take():
            message = Notify(events)
            if self._tell_held(cwd, message):
                continue
            try:
                self._route(cwd, message, activate=False)
            except ActorDeadError:  # the gateway itself stopped: the server is shutting down
                logger.warning("dropped %d notified events for %s at shutdown", len(events), cwd)

    def _remember(self, cwd: str, handle: Future[ActorRef[Any]]) -> None:
        if handle.cancelled() or handle.exception() is not None:
            return
        if len(self._handles) >= C.EDGE_HANDLE_CACHE_SIZE:
            self._handles.pop(next(iter(self._handles.keys()), ""), None)
        self._handles[cwd] = handle.result()

    def _forget(self, cwd: str, ref: ActorRef[Any]) -> None:
        """Drop `cwd`'s entry if it is still `ref` (a newer handle may have replaced it)."""
        if self._handles.get(cwd) is ref:
            self._handles.pop(cwd, None)
