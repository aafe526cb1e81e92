"""RayRouter: the gateway's way to the workspace actors on a Ray cluster.

It stands where the local backend's GatewayActor stands (the service `tell`s it the same
`Route`, `ListWorkspaces`, `UpdateServices` and `Drain` messages), but holds no workspace: a
request becomes a plain record (`wire.to_request`) sent to the named, detached workspace actor
of its canonical root, looked up by name or created (`get_if_exists`) on a node that holds the
checkout. The call's object ref is awaited on the caller's event loop (the gateway's, or the
actor system's I/O loop for calls made from a thread), never blocking it, and its outcome fills
the message's reply slot. Any number of gateways do the same and reach the same actors.

A call that meets a restarting actor (its process was killed, its node lost) is sent again,
with backoff, until the request's own deadline: workspace requests are safe to repeat (a
question is read-only on the repository; a notification or an import applied twice is the same
state), and a restarted actor restores its snapshot before it serves.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Coroutine
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import ray
from ray.exceptions import ActorDiedError, ActorUnavailableError, GetTimeoutError
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from live_memory.actors import Drain, IoLoop, ListWorkspaces, Route, UpdateServices, resolve
from live_memory.config import ResolvedRoots, Settings
from live_memory.config import constants as C
from live_memory.errors import LiveMemoryError, UnknownWorkspace, WorkspaceUnavailable
from live_memory.memory import Snapshots
from live_memory.ray_backend.host import WorkspaceHost
from live_memory.ray_backend.placement import actor_name, choose_node, choose_resource
from live_memory.ray_backend.wire import AskRequest, Outcome, Request, to_request

__all__ = ["RayRouter"]

logger = logging.getLogger(__name__)

_RESTARTING = (ActorUnavailableError, ActorDiedError)


class RayRouter:
    def __init__(self, settings: Settings, store: Snapshots, io: IoLoop) -> None:
        self.settings, self.store, self.io = settings, store, io
        self.handles: OrderedDict[str, Any] = OrderedDict()
        self.resolved = ResolvedRoots()
        self._nodes: tuple[float, list[dict[str, object]]] = (0.0, [])
        self._tasks: set[asyncio.Task[None]] = set()
        self._lock = threading.Lock()
        """Lookups run on worker threads (`asyncio.to_thread`): the caches have one owner."""
        self.host_cls = ray.remote(WorkspaceHost)

    # --- the GatewayActor's messages -------------------------------------------------------
    def tell(self, message: Any) -> None:
        match message:
            case Route():
                if message.handle is not None:
                    message.handle.cancel()  # no direct handles: every request goes by name
                self._spawn(self._route(message))
            case ListWorkspaces():
                self._spawn(self._list(message.reply))
            case UpdateServices():
                self.settings = message.services.settings
                self._spawn(self._reconfigure())
            case Drain():  # detached actors keep serving; nothing of theirs lives here
                resolve(message.reply, None)
            case _:
                logger.debug("the Ray router ignores %s", type(message).__name__)

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # told from a thread (start-up, a dashboard helper)
            self.io.submit(coro)
            return
        task = loop.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # --- requests --------------------------------------------------------------------------
    async def _route(self, route: Route) -> None:
        reply: Future[Any] | None = getattr(route.message, "reply", None)
        request = to_request(route.message)
        if request is None:
            logger.warning("not a workspace request over Ray: %s", type(route.message).__name__)
            return
        try:
            outcome = await self._call(
                route.cwd, request, activate=route.activate_unknown, reply=reply
            )
        except (LiveMemoryError, TimeoutError) as exc:
            outcome = Outcome(error=exc)
        except Exception as exc:  # the actor raised something else: the asker hears it
            logger.exception("workspace request %s failed on Ray", type(route.message).__name__)
            outcome = Outcome(error=WorkspaceUnavailable(f"the workspace actor failed: {exc}"))
        if reply is not None:
            if outcome.error is not None:
                resolve(reply, error=outcome.error)
            else:
                resolve(reply, outcome.value)

    async def _call(
        self, cwd: str, request: Request, *, activate: bool, reply: Future[Any] | None
    ) -> Outcome:
        root = await asyncio.to_thread(self._resolve, cwd)
        deadline = time.monotonic() + (
            request.budget_s + C.HARD_DEADLINE_MARGIN_S
            if isinstance(request, AskRequest)
            else C.RAY_EDGE_REPLY_TIMEOUT_S
        )
        delays = itertools.chain(C.RAY_RETRY_BACKOFF_S, itertools.repeat(C.RAY_RETRY_BACKOFF_S[-1]))
        for delay in delays:
            handle = await asyncio.to_thread(self._handle, root, activate)
            ref = handle.call.remote(request)
            if reply is not None:  # the asker went away: the actor's slot is cancelled too
                reply.add_done_callback(functools.partial(_cancel_if_gone, ref))
            try:
                result: Outcome = await ref
                return result
            except _RESTARTING as exc:
                if isinstance(exc, ActorDiedError):  # gone for good: created again next time
                    with self._lock:
                        self.handles.pop(root, None)
                if time.monotonic() + delay > deadline:
                    raise WorkspaceUnavailable(
                        f"the workspace actor of {root} did not come back in time: {exc}"
                    ) from None
                logger.info("workspace actor of %s is restarting; sending again", root)
                await asyncio.sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover

    def _resolve(self, cwd: str) -> str:
        with self._lock:
            return self.resolved.resolve(cwd, self.settings)

    def _handle(self, root: str, activate: bool) -> Any:
        """The workspace actor of `root`: remembered, found by name, or created (when
        `activate`, or when it has a snapshot) on a node holding the checkout."""
        with self._lock:
            return self._lookup(root, activate)

    def _lookup(self, root: str, activate: bool) -> Any:
        handle = self.handles.get(root)
        if handle is not None:
            self.handles.move_to_end(root)
            return handle
        name = actor_name(root)
        namespace = self.settings.ray_namespace
        try:
            handle = ray.get_actor(name, namespace=namespace)
        except ValueError:  # no such actor yet
            if not activate and not self.store.exists(Path(root)):
                raise UnknownWorkspace(f"no memory for workspace {root}") from None
            nodes = self._live_nodes()
            resource = choose_resource(root, nodes)
            node = choose_node(root, resource, nodes)
            placement = {} if node is None else {"scheduling_strategy": _near(node)}
            handle = self.host_cls.options(
                name=name,
                namespace=namespace,
                lifetime="detached",
                get_if_exists=True,
                max_restarts=C.RAY_MAX_RESTARTS,
                max_task_retries=C.RAY_MAX_TASK_RETRIES,
                max_concurrency=C.RAY_ACTOR_CONCURRENCY,
                num_cpus=0,
                resources={resource: C.RAY_CHECKOUT_RESOURCE_UNIT},
                **placement,
            ).remote(root, self.settings)
        self.handles[root] = handle
        if len(self.handles) > C.EDGE_HANDLE_CACHE_SIZE:
            self.handles.popitem(last=False)
        return handle

    def _live_nodes(self, *, fresh: bool = False) -> list[dict[str, object]]:
        read_at, nodes = self._nodes
        if fresh or time.monotonic() - read_at > C.RAY_NODES_CACHE_S:
            nodes = [n for n in ray.nodes() if n.get("Alive")]  # type: ignore[no-untyped-call]
            self._nodes = (time.monotonic(), nodes)
        return nodes

    # --- the cluster's view ----------------------------------------------------------------
    def _named_hosts(self) -> list[Any]:
        namespace = self.settings.ray_namespace
        hosts = sorted(n for n in _actor_names() if n.startswith(C.RAY_ACTOR_NAME_PREFIX))
        found = []
        for name in hosts[: C.RAY_MAX_INVENTORY_ACTORS]:
            try:
                found.append(ray.get_actor(name, namespace=namespace))
            except ValueError:  # killed meanwhile
                continue
        return found

    async def inventory(self) -> list[dict[str, object]]:
        """Every workspace actor of this namespace: its host row (root, node, pid, restore
        time, recent forks) and the actors inside it, each with its node; a host that does
        not answer in time is listed as unreachable. Then the passivated workspaces (a
        snapshot on the shared data directory and no actor) and the cluster's live nodes."""
        hosts = await asyncio.to_thread(self._named_hosts)
        refs = [h.inventory.remote() for h in hosts]
        rows: list[dict[str, object]] = []
        for ref in refs:
            try:
                async with asyncio.timeout(C.RAY_INVENTORY_TIMEOUT_S):
                    rows.append(await ref)
            except (TimeoutError, GetTimeoutError, *_RESTARTING) as exc:
                rows.append({"state": "unreachable", "error": f"{type(exc).__name__}: {exc}"})
        rows.extend(await asyncio.to_thread(self._passivated))
        return rows + await asyncio.to_thread(self._node_rows)

    def _passivated(self) -> list[dict[str, object]]:
        """Stored workspaces without a live actor (read after the hosts: one that passivated
        meanwhile is listed here rather than nowhere)."""
        named = set(_actor_names())
        stored, _ = self.store.page_of_roots(0, C.RAY_MAX_INVENTORY_ACTORS)
        return [
            {"root": str(root), "state": "passivated", "snapshot_at": saved_at}
            for root, saved_at in stored
            if actor_name(str(root)) not in named
        ]

    def _node_rows(self) -> list[dict[str, object]]:
        """The live nodes (fresh: placement uses them next) and the checkouts they hold."""
        return [
            {
                "kind": "ray_node",
                "node_id": node.get("NodeID"),
                "node_ip": node.get("NodeManagerAddress"),
                "head": "node:__internal_head__" in resources,
                "checkout_resources": sorted(
                    k for k in resources if k.startswith(C.RAY_CHECKOUT_RESOURCE_PREFIX)
                ),
            }
            for node in self._live_nodes(fresh=True)
            for resources in [_resources(node)]
        ]

    async def _list(self, reply: Future[list[str]]) -> None:
        rows = await self.inventory()
        resolve(reply, sorted(str(r["root"]) for r in rows if r.get("state") == "active"))

    async def _reconfigure(self) -> None:
        hosts = await asyncio.to_thread(self._named_hosts)
        for host in hosts:
            try:
                await host.reconfigure.remote(self.settings)
            except _RESTARTING:  # it restarts with the settings it was created with
                logger.warning("a workspace actor missed a configuration reload")


def _actor_names() -> list[str]:
    """The named actors of this namespace (live or restarting)."""
    return [
        str(entry["name"] if isinstance(entry, dict) else entry)
        for entry in ray.util.list_named_actors(all_namespaces=False)
    ]


def _near(node_id: str) -> NodeAffinitySchedulingStrategy:
    """On `node_id` while it lives and has room; on another node with the resource else."""
    return NodeAffinitySchedulingStrategy(node_id, soft=True)


def _resources(node: dict[str, object]) -> dict[str, object]:
    resources = node.get("Resources")
    return dict(resources) if isinstance(resources, dict) else {}


def _cancel_if_gone(ref: Any, reply: Future[Any]) -> None:
    """A reply slot's callback: when the asker cancelled it (timeout, disconnect), cancel the
    Ray call, so the host cancels its own slot and the workspace learns it (CancelFork)."""
    if reply.cancelled():
        try:
            ray.cancel(ref)
        except Exception:  # finished meanwhile, or the actor is gone: nothing to stop
            logger.debug("cancelling a finished Ray call", exc_info=True)
