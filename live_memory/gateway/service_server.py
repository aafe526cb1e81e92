"""The server-wide side of the service: /health, usage, hot reload, the endpoint probe,
the actor inventory and shutdown."""

from __future__ import annotations

import asyncio
import logging
import time
from concurrent.futures import Future

from live_memory.actors import Drain, ListWorkspaces, UpdateServices, keep_warm_config
from live_memory.agent import Services, with_endpoint
from live_memory.config import Settings
from live_memory.config import constants as C
from live_memory.gateway.bodies import health_document
from live_memory.gateway.bridge import wait_reply
from live_memory.gateway.service_base import ServiceBase
from live_memory.memory import Snapshots
from live_memory.providers import EndpointFacts, probe_endpoint

__all__ = ["ServerSide"]

logger = logging.getLogger(__name__)


class ServerSide(ServiceBase):
    """What concerns the whole server rather than one workspace."""

    def __init__(self, settings: Settings, *, store: Snapshots | None = None) -> None:
        super().__init__(settings, store=store)
        self.probe_endpoint(self.services)

    async def health(self) -> dict[str, object]:
        reply: Future[list[str]] = Future()
        cap: Future[dict[str, int]] | None = Future() if self.router is None else None
        self.gateway.tell(ListWorkspaces(reply, cap))  # the Ray router has no cap to tell
        active = await wait_reply(reply, self.reply_timeout_s)
        capped = await wait_reply(cap, self.reply_timeout_s) if cap is not None else {}
        numbers = await self.blocking.run(self._health_numbers)
        disk_problem = await self.blocking.run(self.disk.problem)
        endpoint = self.services.endpoint_report() if self.settings.provider else None
        return health_document(
            self.settings,
            uptime_s=time.time() - self.started_at,
            active=len(active),
            numbers={**capped, **numbers},
            endpoint=endpoint,
            watcher=await self.watcher_status(),
            snapshot_error=self.store.write_error,
            disk_problem=disk_problem,
        )

    def _health_numbers(self) -> dict[str, object]:
        """The parts of /health read from SQLite (run on the blocking pool)."""
        return {
            "budget": self.services.spend.report(),
            "usage_today": self.stores.usage.today_totals(),
            "transcripts": self.stores.transcripts.counts(),
        }

    async def usage_by_day(self, workspace: str | None) -> list[dict[str, object]]:
        """Usage per UTC day (of one workspace, or of all), read off the event loop."""
        return await self.blocking.run(
            self.stores.usage.by_day, C.USAGE_BY_DAY_DEFAULT_DAYS, workspace
        )

    def reconfigure(self, settings: Settings, services: Services) -> None:
        """Hot reload: new questions use `services`; in-flight ones finish on the old."""
        self._adopt(settings, services)
        self.probe_endpoint(services)

    def _adopt(self, settings: Settings, services: Services) -> None:
        self.settings, self.services = settings, services
        self.gateway.tell(UpdateServices(services))
        if self.keep_warm is not None:
            self.keep_warm.tell(keep_warm_config(services))

    def probe_endpoint(self, services: Services) -> None:
        """Ask an OpenAI-compatible server once for its context size, on the I/O loop (never
        the event loop, never holding up start-up); what it says is adopted when it answers,
        unless a reload replaced `services` meanwhile (that reload probes for itself)."""
        if services.endpoint.status != "pending":
            return
        settings = services.settings
        probe = probe_endpoint(settings.base_url or "", settings.model, settings.api_key)
        future = self.system.io.submit(probe)

        def adopt(done: Future[EndpointFacts]) -> None:
            if done.cancelled() or done.exception() is not None:
                return  # the I/O loop stopped (shutdown); probe_endpoint itself never raises
            if self.services is services and not self.closing:
                self._adopt(self.settings, with_endpoint(services, done.result()))

        future.add_done_callback(adopt)

    async def watcher_status(self) -> dict[str, object] | None:
        """What the watcher last published: never waits on the watcher (it may be walking
        a large tree or flushing a storm). A watcher on one message for longer than
        WATCH_STUCK_AFTER_S is degraded: no edit anywhere is seen meanwhile."""
        if self.watcher is None:
            return None
        status = self.watcher_board.read()
        busy = self.system.busy(self.watcher)
        if busy is not None and busy[1] > C.WATCH_STUCK_AFTER_S:
            status["stuck_s"] = round(busy[1], 1)
            status["degraded_reason"] = status.get("degraded_reason") or (
                f"the watcher has been on one {busy[0]} for {busy[1]:.0f} s: no edit in any "
                "workspace is seen meanwhile"
            )
        return status

    def actors(self) -> list[dict[str, object]]:
        return self.system.inventory()

    async def cluster_actors(self) -> list[dict[str, object]]:
        """`/actors`: this process's actors, and with the Ray backend every workspace actor
        of the cluster (one row for its host, then its actors), each with its node."""
        rows = self.actors()
        if self.router is not None:
            for host in await self.router.inventory():
                inner = host.pop("actors", [])
                rows.append({"kind": "ray_workspace_host", "name": host.get("root"), **host})
                rows.extend(inner if isinstance(inner, list) else [])
        return rows

    async def shutdown(self, grace_s: float = C.SHUTDOWN_GRACE_S) -> None:
        """Stop admissions, let in-flight questions finish up to `grace_s`, flush, stop."""
        self.closing = True
        self.flush_notifications()  # 200s already promised them
        reply: Future[None] = Future()
        self.gateway.tell(Drain(grace_s, reply))
        await self.jobs.aclose()
        try:
            await wait_reply(reply, grace_s)
        except TimeoutError:
            logger.warning("in-flight questions did not finish within %.0f s", grace_s)
        if self.services.provider is not None:
            try:
                await asyncio.wrap_future(self.system.io.submit(self.services.provider.aclose()))
            except Exception:  # closing a client must never block the shutdown
                logger.exception("closing the provider client failed")
        await asyncio.to_thread(self.system.shutdown)
        # The last saves' fsyncs (a load would settle what is left, but leave nothing).
        await asyncio.to_thread(self.store.wait_settled, C.ACTOR_STOP_TIMEOUT_S)
        if self.router is not None:
            from live_memory.ray_backend import disconnect  # noqa: PLC0415

            await asyncio.to_thread(disconnect)
        await asyncio.to_thread(self.blocking.close)
        self.stores.close()
