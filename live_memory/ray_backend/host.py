"""WorkspaceHost: the body of one named, detached Ray actor serving one workspace.

It hosts what the local backend runs for a workspace, unchanged: the pure WorkspaceState in a
WorkspaceActor (here `DurableWorkspaceActor`), its forks, and its effect runner, in a
private actor system of the host's process, behind a GatewayActor that supervises it
(passivation, restarts after a broken handler, forks adopted across a restart). Keep-warm and
the OS watcher run here too, one of each per workspace on the node that holds the checkout:
a ping is sent once however many gateways there are, and the watcher sees the files it watches.

Every call is one plain request record (`wire`) in and an `Outcome` out; the reply slot of the
local message never leaves this process. When Ray restarts the process (it was killed, or its
node was lost), `__init__` runs again and the workspace restores from its snapshot on the
shared data directory before the first request is served. A question is answered once per
key (`answers`): a re-send of one already answered gets the logged answer.

Idle hosts are passivated as the local backend passivates idle workspaces: after
LIVE_MEMORY_PASSIVATE_AFTER_S without a call the host drains (snapshots written) and kills
its own actor with no restart, so an unused workspace holds no process; the next request
re-creates it by name from the snapshot, and /actors lists it as passivated meanwhile.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from concurrent.futures import Future
from typing import Any

from live_memory.actors import (
    ActorSystem,
    AttachWatcher,
    Drain,
    GatewayActor,
    GetStats,
    KeepWarmActor,
    NotifyOutcome,
    Route,
    SweepIdle,
    UpdateServices,
    WatchdogActor,
    keep_warm_config,
)
from live_memory.agent import Stores, build_services
from live_memory.config import Settings
from live_memory.config import constants as C
from live_memory.errors import LiveMemoryError
from live_memory.knowledge import TranscriptQueue, UsageLedger
from live_memory.memory import Snapshots, SnapshotStore
from live_memory.ray_backend.answers import AnswerLog
from live_memory.ray_backend.durable import Flush
from live_memory.ray_backend.remote_forks import FORK_RUNS, RayWorkspaceActor
from live_memory.ray_backend.wire import AskRequest, Outcome, PlainRequest, Request, request_message
from live_memory.watchers import WatcherBoard
from live_memory.workspace import Answer

__all__ = ["WorkspaceHost"]

logger = logging.getLogger(__name__)


class WorkspaceHost:
    def __init__(self, root: str, settings: Settings) -> None:
        began = time.monotonic()
        os.umask(C.DATA_UMASK)
        self.root, self.settings = root, settings
        self.started_at = time.time()
        self.stores = Stores(
            UsageLedger(settings.data_dir / C.USAGE_FILE_NAME),
            TranscriptQueue(settings.data_dir / C.TRANSCRIPT_QUEUE_FILE_NAME),
        )
        self.services = build_services(settings, self.stores)
        self.store: Snapshots = SnapshotStore(settings.snapshot_dir)
        self.system = ActorSystem()
        self.gateway = self.system.start(
            GatewayActor,
            services=self.services,
            store=self.store,
            workspace_cls=RayWorkspaceActor,
        )
        idle_s = settings.passivate_after_s
        self.system.every(
            min(C.PASSIVATION_SWEEP_S, idle_s / 2), self.gateway, lambda: SweepIdle(idle_s)
        )
        self.keep_warm = self.system.start(
            KeepWarmActor, gateway=self.gateway, config=keep_warm_config(self.services)
        )
        self.watcher_board = WatcherBoard()
        if settings.watcher == "os":
            watcher = self.system.start(
                WatchdogActor, gateway=self.gateway, settings=settings, board=self.watcher_board
            )
            self.gateway.tell(AttachWatcher(watcher))
        self.answers = AnswerLog(settings.data_dir / C.RAY_ANSWER_LOG_DIR, root)
        self.asking: dict[str, tuple[asyncio.Task[Outcome], list[int]]] = {}
        """Questions being answered: key -> (the run, [callers awaiting it])."""
        self.active_calls = 0
        self.last_call = time.monotonic()
        self.closing = False
        self.idle_watch: asyncio.Task[None] | None = None
        # Activate (restore the snapshot, preload) before serving: a restarted host answers
        # its first request from the restored memory, and the time it took is reported.
        ready: Future[dict[str, object]] = Future()
        self.gateway.tell(Route(root, GetStats(ready)))
        try:
            ready.result(timeout=C.RAY_HOST_ACTIVATE_TIMEOUT_S)
        except Exception:  # served anyway: each request reports its own failure
            logger.exception("workspace %s did not activate", root)
        self.restore_s = time.monotonic() - began

    async def call(self, request: Request) -> Outcome:
        """Serve one request; a LiveMemoryError (or timeout) comes back as `Outcome.error`."""
        if self.closing:  # passivating: this process is about to end, the caller re-sends
            await asyncio.Event().wait()
        if self.idle_watch is None:
            self.idle_watch = asyncio.get_running_loop().create_task(self._watch_idle())
        self.active_calls += 1
        try:
            if isinstance(request, AskRequest) and request.key:
                return await self._ask_once(request)
            return await self._serve(request)
        finally:
            self.active_calls -= 1
            self.last_call = time.monotonic()

    async def _ask_once(self, request: AskRequest) -> Outcome:
        """Answer a question key once: from the log if it was answered, else by joining the
        run still answering it, else by asking (and logging the answer before it returns)."""
        known = self.answers.get(request.key)
        if known is not None:
            return Outcome(known)
        entry = self.asking.get(request.key)
        if entry is None:
            run = asyncio.get_running_loop().create_task(self._serve(request))
            entry = self.asking[request.key] = (run, [0])
            run.add_done_callback(lambda _: self.asking.pop(request.key, None))
        run, callers = entry
        callers[0] += 1
        try:
            outcome = await asyncio.shield(run)
        except asyncio.CancelledError:  # this caller gave up: so does the run, if it was alone
            if callers[0] == 1:
                run.cancel()
            raise
        finally:
            callers[0] -= 1
        if isinstance(outcome.value, Answer) and self.answers.get(request.key) is None:
            try:
                await asyncio.to_thread(self.answers.put, request.key, outcome.value)
            except OSError as exc:  # answered all the same; a re-send would ask again
                logger.warning("answer log of %s not written: %s", self.root, exc)
        return outcome

    async def _serve(self, request: Request) -> Outcome:
        reply: Future[Any] = Future()
        try:
            message = request_message(request, reply)
            self.gateway.tell(Route(self.root, message))
            value = await _wait(reply, _timeout(request))
            if isinstance(value, NotifyOutcome) and value.accepted:
                await self._flush()
            return Outcome(value)
        except (LiveMemoryError, TimeoutError) as exc:
            return Outcome(error=exc)

    async def _watch_idle(self) -> None:
        """Passivate this host once no call came for LIVE_MEMORY_PASSIVATE_AFTER_S."""
        idle_s = self.settings.passivate_after_s
        while True:
            quiet = time.monotonic() - self.last_call
            if self.active_calls == 0 and quiet >= idle_s:
                break
            await asyncio.sleep(max(idle_s - quiet, C.RAY_IDLE_CHECK_MIN_S))
        self.closing = True  # from here on a call waits for the process to end
        logger.info("passivating the idle workspace actor of %s", self.root)
        drained: Future[None] = Future()
        self.gateway.tell(Drain(C.RAY_PASSIVATE_GRACE_S, drained))  # snapshots written
        try:
            await _wait(drained, C.RAY_PASSIVATE_GRACE_S + C.EDGE_REPLY_TIMEOUT_S)
        except TimeoutError:
            logger.warning("the idle workspace %s did not drain in time", self.root)
        await asyncio.to_thread(self.system.shutdown)
        import ray  # noqa: PLC0415  (only ever imported inside a Ray worker)

        ray.kill(ray.get_runtime_context().current_actor, no_restart=True)

    async def _flush(self) -> None:
        done: Future[str | None] = Future()
        self.gateway.tell(Route(self.root, Flush(done)))
        problem = await _wait(done, C.EDGE_REPLY_TIMEOUT_S)
        if problem is not None:
            raise LiveMemoryError(f"the notification is applied but not persisted: {problem}")

    async def reconfigure(self, settings: Settings) -> None:
        """A gateway's configuration reload: later questions use the new services."""
        self.settings = settings
        self.services = await asyncio.to_thread(build_services, settings, self.stores)
        self.gateway.tell(UpdateServices(self.services))
        self.keep_warm.tell(keep_warm_config(self.services))

    async def inventory(self) -> dict[str, object]:
        """This host's actors, with where they run (for /actors on any gateway)."""
        import ray  # noqa: PLC0415  (only ever imported inside a Ray worker)

        context = ray.get_runtime_context()
        where = {
            "node_id": context.get_node_id(),
            "node_ip": ray.util.get_node_ip_address(),  # type: ignore[no-untyped-call]
            "pid": os.getpid(),
            "ray_actor_id": context.get_actor_id(),
        }
        return {
            "root": self.root,
            "started_at": self.started_at,
            "restore_s": round(self.restore_s, 3),
            "restarted": context.was_current_actor_reconstructed,
            "state": "passivating" if self.closing else "active",
            **where,
            "forks": list(FORK_RUNS),
            "actors": [row | where for row in self.system.inventory()],
        }


def _timeout(request: Request) -> float:
    if isinstance(request, AskRequest):
        return max(request.budget_s, 0.0) + C.HARD_DEADLINE_MARGIN_S
    assert isinstance(request, PlainRequest)
    return C.EDGE_REPLY_TIMEOUT_S


async def _wait(reply: Future[Any], timeout_s: float) -> Any:
    """Await an actor's reply slot on this actor's event loop; a cancelled call (the gateway
    gave up) cancels the slot, so the workspace learns its asker went away."""
    try:
        async with asyncio.timeout(timeout_s):
            return await asyncio.wrap_future(reply)
    finally:
        if not reply.done():
            reply.cancel()
