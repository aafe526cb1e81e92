"""The edge's view of the actor system: validates input, sends messages, awaits replies.

Shared by the MCP tools and the REST routes; holds no workspace state itself.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

from live_memory import __version__
from live_memory.actors import (
    ActorSystem,
    Answer,
    Ask,
    Clear,
    Drain,
    GatewayActor,
    GetStats,
    ListWorkspaces,
    Notify,
    NotifyOutcome,
    Reset,
    Route,
    SweepIdle,
)
from live_memory.actors.gateway import AttachWatcher
from live_memory.actors.keep_warm import KeepWarmActor, KeepWarmConfig
from live_memory.actors.message import GetWatcherStatus, UpdateServices
from live_memory.actors.runtime import ActorRef
from live_memory.actors.watchdog import WatchdogActor
from live_memory.agent import Services, build_services, clamp_answer_tokens
from live_memory.agent.spend import utc_today
from live_memory.config import Settings, canonical_workspace
from live_memory.config import constants as C
from live_memory.errors import InputError, PayloadTooLarge, ShuttingDown
from live_memory.gateway.bridge import wait_reply
from live_memory.gateway.jobs import JobRunner
from live_memory.gateway.notify_parse import parse_notify
from live_memory.knowledge import UsageLedger
from live_memory.memory.snapshot_store import SnapshotStore

__all__ = ["LiveMemoryService"]

logger = logging.getLogger(__name__)
T = TypeVar("T")


def keep_warm_config(services: Services) -> KeepWarmConfig:
    settings = services.settings
    return KeepWarmConfig(
        enabled=settings.keep_warm and services.provider is not None,
        interval_s=services.keep_warm_interval_s,
        max_idle_s=settings.keep_warm_max_idle_s,
    )


def _question(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InputError("question must be a non-empty string")
    if len(value) > C.MAX_QUESTION_CHARS:
        raise PayloadTooLarge(
            f"question is {len(value)} characters; the limit is {C.MAX_QUESTION_CHARS}"
        )
    return value.strip()


def _cwd(value: object) -> str:
    if not isinstance(value, str) or not value:
        raise InputError("cwd must be the absolute path of your repository root")
    return value


def _answer_tokens(value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InputError("max_answer_tokens must be a non-negative integer")
    return value


class LiveMemoryService:
    """One per app: owns the actor system for the app's lifetime."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.started_at = time.time()
        self.usage = UsageLedger(
            settings.data_dir / C.USAGE_FILE_NAME, today=lambda: utc_today().date()
        )
        self.services: Services = build_services(settings, self.usage)
        self.store = SnapshotStore(settings.snapshot_dir)
        self.system = ActorSystem()
        self.gateway = self.system.start(GatewayActor, services=self.services, store=self.store)
        idle_s = settings.passivate_after_s
        self.system.every(
            min(C.PASSIVATION_SWEEP_S, idle_s / 2), self.gateway, lambda: SweepIdle(idle_s)
        )
        self.keep_warm = self.system.start(
            KeepWarmActor, gateway=self.gateway, config=keep_warm_config(self.services)
        )
        self.watcher: ActorRef[Any] | None = None
        if settings.watcher == "os":
            self.watcher = self.system.start(WatchdogActor, gateway=self.gateway, settings=settings)
            self.gateway.tell(AttachWatcher(self.watcher))
        self.closing = False
        self.jobs = JobRunner()

    # --- questions -----------------------------------------------------------------------
    def check_ask(
        self, question: object, cwd: object, max_answer_tokens: object = None
    ) -> tuple[str, str, int]:
        """Validate a question's arguments: (question, cwd, answer tokens).

        Raises InputError, PayloadTooLarge, ShuttingDown or NoProviderConfigured.
        """
        text, where = _question(question), _cwd(cwd)
        canonical_workspace(where, canonicalize=False)  # fail fast: relative, missing, file
        requested = _answer_tokens(max_answer_tokens)
        tokens = clamp_answer_tokens(requested, self.settings.max_answer_tokens)
        if self.closing:
            raise ShuttingDown("the server is shutting down")
        self.services.require_provider()
        return text, where, tokens

    async def ask(self, question: object, cwd: object, max_answer_tokens: object = None) -> Answer:
        """Answer a question. Raises InputError, NoProviderConfigured, ProviderError,
        ShuttingDown, Busy, or TimeoutError at the hard backstop."""
        text, where, tokens = self.check_ask(question, cwd, max_answer_tokens)
        budget = self.settings.default_timeout_s
        reply: Future[Answer] = Future()
        self.gateway.tell(Route(where, Ask(text, tokens, time.monotonic() + budget, reply)))
        try:
            return await wait_reply(reply, budget + C.HARD_DEADLINE_MARGIN_S)
        except TimeoutError:
            raise TimeoutError(
                f"no answer within the hard backstop of {budget + C.HARD_DEADLINE_MARGIN_S:.0f} s"
            ) from None

    # --- workspace requests --------------------------------------------------------------
    async def _call(
        self, cwd: object, make: Callable[[Future[T]], Any], *, activate: bool = True
    ) -> T:
        reply: Future[T] = Future()
        self.gateway.tell(Route(_cwd(cwd), make(reply), activate_unknown=activate))
        return await wait_reply(reply, C.EDGE_REPLY_TIMEOUT_S)

    async def notify(self, body: object) -> NotifyOutcome:
        cwd, events = parse_notify(body)
        if not events:
            return NotifyOutcome(0, 0)
        return await self._call(cwd, lambda r: Notify(tuple(events), r))

    async def stats(self, cwd: object) -> dict[str, object]:
        return await self._call(cwd, GetStats, activate=False)

    async def reset(self, cwd: object) -> dict[str, object]:
        return await self._call(cwd, Reset)

    async def clear(self, cwd: object) -> dict[str, object]:
        return await self._call(cwd, Clear)

    # --- server --------------------------------------------------------------------------
    async def health(self) -> dict[str, object]:
        reply: Future[list[str]] = Future()
        self.gateway.tell(ListWorkspaces(reply))
        active = await wait_reply(reply, C.EDGE_REPLY_TIMEOUT_S)
        body: dict[str, object] = {
            "status": "ok" if self.settings.provider else "no_provider",
            "version": __version__,
            "uptime_s": round(time.time() - self.started_at, 1),
            "workspaces_active": len(active),
            "provider": self.settings.provider,
            "model": self.settings.model if self.settings.provider else None,
            "budget": self.services.spend.report(),
        }
        if self.settings.provider is None:
            body["problem"] = self.settings.provider_problem
        watcher = await self.watcher_status()
        if watcher is not None:
            body["watcher"] = watcher
            if watcher.get("degraded_reason"):
                body["status"] = "degraded"
        return body

    def reconfigure(self, settings: Settings, services: Services) -> None:
        """Hot reload: new questions use `services`; in-flight ones finish on the old."""
        self.settings, self.services = settings, services
        self.gateway.tell(UpdateServices(services))
        self.keep_warm.tell(keep_warm_config(services))

    async def watcher_status(self) -> dict[str, object] | None:
        if self.watcher is None:
            return None
        reply: Future[dict[str, object]] = Future()
        self.watcher.tell(GetWatcherStatus(reply))
        return await wait_reply(reply, C.EDGE_REPLY_TIMEOUT_S)

    def actors(self) -> list[dict[str, object]]:
        return self.system.inventory()

    async def shutdown(self, grace_s: float = C.SHUTDOWN_GRACE_S) -> None:
        """Stop admissions, let in-flight questions finish up to `grace_s`, flush, stop."""
        self.closing = True
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
        self.usage.close()
