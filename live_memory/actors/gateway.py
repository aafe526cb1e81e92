"""GatewayActor: the name directory. Resolves cwd → canonical root → workspace actor,
activating workspaces on demand (virtual actors) and passivating idle ones."""

from __future__ import annotations

import logging
import threading
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from live_memory.actors.message import (
    Clear,
    ClearAll,
    ClearAllStarted,
    Drain,
    IdleCheck,
    KeepWarmTick,
    ListWorkspaces,
    Passivate,
    Passivated,
    RequestPassivation,
    RestartWorkspace,
    Route,
    UnwatchRoot,
    UpdateServices,
    WatchRoot,
)
from live_memory.actors.passivation import ActiveWorkspaces, MakeRoom, PassivateIfIdle, StaysActive
from live_memory.actors.runtime import Actor, ActorDeadError, ActorRef, ActorSystem, resolve
from live_memory.actors.stored_wipe import forget_stored
from live_memory.actors.workspace import WorkspaceActor
from live_memory.agent import Services
from live_memory.config import ResolvedRoots
from live_memory.errors import LiveMemoryError, ShuttingDown, UnknownWorkspace
from live_memory.memory import Snapshots

__all__ = ["AttachWatcher", "GatewayActor", "SweepIdle"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class AttachWatcher:
    """The OS watcher actor to tell about activations and passivations."""

    watcher: Any


@dataclass(frozen=True, slots=True)
class SweepIdle:
    """Ask every active workspace whether it has been idle for `idle_after_s`."""

    idle_after_s: float


def _fail(message: Any, error: BaseException) -> None:
    reply = getattr(message, "reply", None)
    if isinstance(reply, Future) and not reply.done():
        reply.set_exception(error)


class GatewayActor(Actor):
    kind = "gateway"

    def __init__(
        self,
        system: ActorSystem,
        *,
        services: Services,
        store: Snapshots,
        workspace_cls: type[WorkspaceActor] = WorkspaceActor,
    ) -> None:
        super().__init__(system, "gateway")
        self.services = services
        self.store = store
        self.active: ActiveWorkspaces[ActorRef[Any]] = ActiveWorkspaces()
        """Least recently used first; at most `workspaces_active_max` unless all are busy."""
        self.passivating: dict[str, list[Any]] = {}
        self.resolved = ResolvedRoots()
        self.closing = False
        self.watcher: ActorRef[Any] | None = None
        self.restarting: set[str] = set()
        self.history: dict[str, tuple[int, str]] = {}
        """Failures per root, carried over to the actor's next incarnation for /actors."""
        self.workspace_cls = workspace_cls

    def handle(self, message: Any) -> None:
        match message:
            case Route():
                self._route(message)
            case RequestPassivation():
                self._begin_passivation(message.root)
            case StaysActive():
                self._make_room(self.active.stays(message.root, self._cap()))
            case RestartWorkspace():
                self._restart(message)
            case Passivated():
                self._end_passivation(message.root)
            case AttachWatcher():
                self.watcher = message.watcher
                for root in self.active:
                    self.watcher.tell(WatchRoot(root))
            case SweepIdle():
                for ref in self.active.values():
                    ref.tell(IdleCheck(message.idle_after_s))
            case UpdateServices():
                self.services = message.services
                self.resolved.clear()
                for ref in self.active.values():
                    ref.tell(message)
            case KeepWarmTick():
                for ref in self.active.values():
                    ref.tell(message)
            case ListWorkspaces():
                message.reply.set_result(sorted(self.active))
                if message.cap is not None:
                    message.cap.set_result(
                        {
                            "workspaces_active_max": self._cap(),
                            "workspaces_admitted_over_cap": self.active.admitted_over_cap,
                        }
                    )
            case ClearAll():
                self._clear_all(message)
            case Drain():
                self._drain(message)
            case _:
                super().handle(message)

    def _resolve(self, cwd: str) -> str:
        return self.resolved.resolve(cwd, self.services.settings)

    def _route(self, route: Route) -> None:
        try:
            root = self._resolve(route.cwd)
        except LiveMemoryError as exc:
            _fail(route.message, exc)
            return
        if root in self.passivating:
            self.passivating[root].append(route)
            return
        ref = self.active.get(root)
        if ref is None:
            if self.closing:
                _fail(route.message, ShuttingDown("the server is shutting down"))
                return
            if not route.activate_unknown and not self.store.exists(Path(root)):
                _fail(route.message, UnknownWorkspace(f"no memory for workspace {root}"))
                return
            try:
                ref = self._activate(root)
            except (LiveMemoryError, OSError) as exc:  # e.g. its index cannot be created
                logger.error("workspace %s cannot be activated: %s", root, exc)
                _fail(route.message, exc)
                if route.handle is not None and not route.handle.done():
                    route.handle.set_exception(exc)
                return
            ref.tell(route.message)
            self._make_room(self.active.activated(self._cap()))
        else:
            self.active.touch(root)
            ref.tell(route.message)
        if route.handle is not None and not route.handle.done():
            route.handle.set_result(ref)

    def _activate(self, root: str) -> ActorRef[Any]:
        logger.info("activating workspace %s", root)
        failures, last_error = self.history.get(root, (0, None))
        ref = self.system.start(
            self.workspace_cls,
            root,
            gateway=self.actor_ref,
            services=self.services,
            store=self.store,
            failures=failures,
            last_error=last_error,
        )
        self.active.add(root, ref)
        if self.watcher is not None:
            self.watcher.tell(WatchRoot(root))
        return ref

    def _cap(self) -> int:
        return self.services.settings.workspaces_active_max

    def _make_room(self, room: MakeRoom) -> None:
        """Ask the least recently used workspaces to passivate if idle (the cap's rule)."""
        for root in room.ask:
            ref = self.active.get(root)
            try:
                if ref is not None:
                    ref.tell(PassivateIfIdle())
            except ActorDeadError:  # stopped on its own meanwhile: its answer is that
                self._make_room(self.active.stays(root, self._cap()))
        if room.over_cap:
            logger.warning(
                "%d workspaces active, %d over LIVE_MEMORY_WORKSPACES_ACTIVE_MAX: every one "
                "asked to make room is busy (admitted over the cap %d times so far)",
                len(self.active),
                room.over_cap,
                self.active.admitted_over_cap,
            )

    def _begin_passivation(self, root: str) -> None:
        if self.closing or root not in self.active:
            return
        ref, room = self.active.passivating(root, self._cap())
        assert ref is not None
        self.passivating[root] = []
        if self.watcher is not None:
            self.watcher.tell(UnwatchRoot(root))
        ref.tell(Passivate())
        self._make_room(room)

    def _restart(self, failure: RestartWorkspace) -> None:
        """Supervision: replace a workspace actor whose handler raised, from its snapshot."""
        ref = self.active.pop(failure.root)
        if ref is None:
            return
        logger.warning("restarting workspace %s after: %s", failure.root, failure.last_error)
        self.history[failure.root] = (failure.failures, failure.last_error)
        self.passivating[failure.root] = []
        self.restarting.add(failure.root)
        ref.tell(Passivate(flush=False))

    def _end_passivation(self, root: str) -> None:
        logger.info("passivated workspace %s", root)
        if root in self.restarting:
            self.restarting.discard(root)
            if not self.closing:
                self._activate(root)
        elif not self.passivating.get(root):
            # Nothing of a passivated workspace stays in memory but its name on disk: stale
            # cwd entries would pin the allocator pages its actor's objects were freed from.
            self.resolved.forget_root(root)
        for route in self.passivating.pop(root, []):
            self._route(route)

    def _clear_all(self, message: ClearAll) -> None:
        loaded: list[Future[dict[str, object]]] = []
        keep = set(self.passivating)
        for root in self.active:
            reply: Future[dict[str, object]] = Future()
            try:
                ref = self.active.get(root)
                assert ref is not None
                ref.tell(Clear(reply))
            except ActorDeadError:  # stopped on its own: what it left on disk goes below
                continue
            keep.add(root)
            loaded.append(reply)
        for root, queued in self.passivating.items():  # cleared by its next incarnation
            loaded.append(Future())
            queued.append(Route(root, Clear(loaded[-1])))
        try:
            stored = forget_stored(self.services, self.store, keep)
        except (LiveMemoryError, OSError) as exc:
            resolve(message.reply, error=exc)
            return
        resolve(message.reply, ClearAllStarted(tuple(loaded), stored))

    def _drain(self, drain: Drain) -> None:
        self.closing = True
        refs = list(self.active.values())
        if not refs:
            drain.reply.set_result(None)
            return
        remaining = [len(refs)]
        lock = threading.Lock()

        def one_done(_: Future[None]) -> None:
            with lock:
                remaining[0] -= 1
                last = remaining[0] == 0
            if last and not drain.reply.done():
                drain.reply.set_result(None)

        for ref in refs:
            reply: Future[None] = Future()
            reply.add_done_callback(one_done)
            ref.tell(Drain(drain.grace_s, reply))
