"""The edge's view of the actor system: validates input, sends messages, awaits replies.

Shared by the MCP tools and the REST routes; holds no workspace state itself.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Protocol, TypeVar

from live_memory.actors import (
    ActorDeadError,
    ActorRef,
    ActorSystem,
    Answer,
    Ask,
    AttachWatcher,
    Clear,
    DescribeMemory,
    Drain,
    DrainTranscripts,
    ExportLedger,
    GatewayActor,
    GetStats,
    ImportFacts,
    KeepWarmActor,
    ListWorkspaces,
    Notify,
    NotifyOutcome,
    Reset,
    Route,
    SweepIdle,
    UpdateServices,
    WatchdogActor,
    keep_warm_config,
)
from live_memory.agent import (
    Services,
    Stores,
    build_services,
    clamp_answer_tokens,
    with_endpoint,
)
from live_memory.config import Settings, canonical_workspace
from live_memory.config import constants as C
from live_memory.errors import (
    LiveMemoryError,
    ShuttingDown,
    UnknownWorkspace,
)
from live_memory.gateway import ask_arguments
from live_memory.gateway.blocking import BlockingCalls
from live_memory.gateway.bodies import health_document, import_body, transcript_body
from live_memory.gateway.bridge import wait_reply
from live_memory.gateway.jobs import JobRunner
from live_memory.gateway.notify_parse import parse_notify
from live_memory.index import SymbolIndexes
from live_memory.knowledge import (
    FactStore,
    TranscriptQueue,
    UsageLedger,
    digest_transcript,
    health_banner,
)
from live_memory.memory import Snapshots, SnapshotStore
from live_memory.providers import EndpointFacts, probe_endpoint
from live_memory.watchers import WatcherBoard

__all__ = ["LiveMemoryService"]

logger = logging.getLogger(__name__)
T = TypeVar("T")


class _Gateway(Protocol):
    """Where the edge sends workspace messages: the local GatewayActor, or the Ray router."""

    def tell(self, message: Any) -> None: ...


class LiveMemoryService:
    """One per app: owns the actor system for the app's lifetime."""

    def __init__(self, settings: Settings, *, store: Snapshots | None = None) -> None:
        self.settings = settings
        self.started_at = time.time()
        self.stores = Stores(
            UsageLedger(settings.data_dir / C.USAGE_FILE_NAME),
            TranscriptQueue(settings.data_dir / C.TRANSCRIPT_QUEUE_FILE_NAME),
            FactStore(
                settings.data_dir / C.FACT_STORE_FILE_NAME,
                max_facts=settings.max_stored_facts,
                retire_after_s=settings.fact_retire_after_s,
            ),
            symbols=SymbolIndexes(settings.data_dir) if settings.symbol_index else None,
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
        self._handles: dict[str, weakref.ref[ActorRef[Any]]] = {}
        """cwd -> weak workspace actor handle (written from actor threads: single dict ops).
        Weak, so a passivated actor's mailbox is freed with it instead of living on here."""
        for root in self.stores.transcripts.workspaces_with_pending():
            self.gateway.tell(Route(root, DrainTranscripts()))
        self.probe_endpoint(self.services)

    # --- questions -----------------------------------------------------------------------
    def check_ask(
        self, question: object, cwd: object, max_answer_tokens: object = None
    ) -> tuple[str, str, int]:
        """Validate a question's arguments: (question, cwd, answer tokens).

        Raises InputError, PayloadTooLarge, ShuttingDown or NoProviderConfigured.
        """
        text = ask_arguments.question(question, self.settings.max_question_chars)
        where = ask_arguments.cwd(cwd)
        canonical_workspace(where, canonicalize=False)  # fail fast: relative, missing, file
        requested = ask_arguments.answer_tokens(max_answer_tokens)
        tokens = clamp_answer_tokens(requested, self.settings.max_answer_tokens)
        if self.closing:
            raise ShuttingDown("the server is shutting down")
        self.services.require_provider()
        return text, where, tokens

    async def ask(self, question: object, cwd: object, max_answer_tokens: object = None) -> Answer:
        """Answer a question. Raises InputError, NoProviderConfigured, ProviderError,
        ShuttingDown, Busy, or TimeoutError at the hard backstop."""
        # The check stats the workspace directory on the loop: a hop to the blocking pool per
        # question delayed admission enough to reorder a burst (a full queue then 429'd fewer).
        text, where, tokens = self.check_ask(question, cwd, max_answer_tokens)
        budget = self.services.budget(tokens).seconds  # a local server's: its measured speed
        reply: Future[Answer] = Future()
        self._asking.add(reply)
        reply.add_done_callback(self._asking.discard)
        self._send(where, Ask(text, tokens, time.monotonic() + budget, reply))
        try:
            return await wait_reply(reply, budget + C.HARD_DEADLINE_MARGIN_S)
        except TimeoutError:
            raise TimeoutError(
                f"no answer within the hard backstop of {budget + C.HARD_DEADLINE_MARGIN_S:.0f} s"
            ) from None

    async def drain_questions(self, timeout_s: float) -> int:
        """Shutdown, first step: admit no new question and wait (up to `timeout_s`) until the
        questions in flight are answered — an answer is only sent once its snapshot is
        written, so what finishes here is durable. Returns how many were still running."""
        self.closing = True
        running = [asyncio.wrap_future(f) for f in list(self._asking)]
        if not running:
            return 0
        done, pending = await asyncio.wait(running, timeout=timeout_s)
        for future in done:
            future.exception()  # retrieved: the asker's own await reports it
        if pending:
            logger.warning("%d question(s) still running after %.0f s", len(pending), timeout_s)
        return len(pending)

    # --- workspace requests --------------------------------------------------------------
    async def _call(
        self, cwd: object, make: Callable[[Future[T]], Any], *, activate: bool = True
    ) -> T:
        reply: Future[T] = Future()
        self._send(ask_arguments.cwd(cwd), make(reply), activate=activate)
        return await wait_reply(reply, self.reply_timeout_s)

    def _send(self, cwd: str, message: Any, *, activate: bool = True) -> None:
        """Tell the workspace for `cwd`: directly on a remembered handle, else through the
        gateway, which resolves the name, activates the actor and hands back its handle."""
        weak = self._handles.get(cwd)
        ref = weak() if weak is not None else None
        if ref is not None:
            try:
                ref.tell(message)
                return
            except ActorDeadError:  # passivated or restarted: ask the gateway again
                self._forget(cwd, weak)
        handle: Future[ActorRef[Any]] = Future()
        handle.add_done_callback(lambda f: self._remember(cwd, f))
        self.gateway.tell(Route(cwd, message, activate_unknown=activate, handle=handle))

    def _remember(self, cwd: str, handle: Future[ActorRef[Any]]) -> None:
        if handle.cancelled() or handle.exception() is not None:
            return
        if len(self._handles) >= C.EDGE_HANDLE_CACHE_SIZE:
            self._handles.pop(next(iter(self._handles)), None)
        self._handles[cwd] = weakref.ref(handle.result(), lambda dead: self._forget(cwd, dead))

    def _forget(self, cwd: str, weak: weakref.ref[ActorRef[Any]] | None) -> None:
        """Drop `cwd`'s entry if it is still `weak` (a newer handle may have replaced it)."""
        if weak is not None and self._handles.get(cwd) is weak:
            self._handles.pop(cwd, None)

    async def notify(self, body: object) -> NotifyOutcome:
        cwd, events = parse_notify(body, max_events=self.settings.max_notify_events)
        if not events:
            return NotifyOutcome(0, 0)
        try:
            # A workspace is created by a question, never by a notification (the design's
            # "/notify only applies to an already-loaded workspace"): one with neither live
            # state nor a snapshot ignores them.
            return await self._call(cwd, lambda r: Notify(tuple(events), r), activate=False)
        except UnknownWorkspace:
            return NotifyOutcome(0, len(events))

    async def stats(self, cwd: object) -> dict[str, object]:
        return await self._call(cwd, GetStats, activate=False)

    async def reset(self, cwd: object) -> dict[str, object]:
        return await self._call(cwd, Reset)

    async def clear(self, cwd: object) -> dict[str, object]:
        return await self._call(cwd, Clear)

    # --- knowledge ------------------------------------------------------------------------
    async def enqueue(self, body: object) -> dict[str, object]:
        """Queue a finished session's transcript for background distillation.

        Raises InputError / TranscriptError (422) for a bad body or unreadable transcript.
        """
        cwd, session, path = transcript_body(body)
        settings = self.settings
        root = await self.blocking.run(
            canonical_workspace,
            cwd,
            canonicalize=settings.canonicalize_workspace,
            mode=settings.repo_root_mode,
        )
        digest = await self.blocking.run(
            digest_transcript, Path(path), max_chars=C.TRANSCRIPT_DIGEST_MAX_CHARS, root=root
        )
        queue = self.stores.transcripts
        row = await self.blocking.run(
            queue.enqueue, str(root), session, Path(path), digest=digest.text
        )
        if row is not None:
            self.gateway.tell(Route(str(root), DrainTranscripts()))
        counts = await self.blocking.run(queue.counts, str(root))
        pending = counts.get("pending", 0)
        return {"queued": row is not None, "id": row, "pending": pending}

    async def export(self, cwd: object) -> dict[str, object]:
        return await self._call(cwd, ExportLedger, activate=False)

    async def import_facts(self, body: object) -> dict[str, object]:
        cwd, facts = import_body(body, self.settings.max_import_facts)
        return await self._call(cwd, lambda r: ImportFacts(facts, r))

    async def banner(self, cwd: object, *, summary: bool) -> dict[str, object]:
        """The session-start banner line (and, when asked, a short memory summary)."""
        health = await self.health()
        stats: dict[str, object] | None = None
        described: dict[str, object] = {"summary": None}
        if isinstance(cwd, str) and cwd:
            try:
                stats = await self.stats(cwd)
                if summary:
                    described = await self._call(
                        cwd, lambda r: DescribeMemory(C.SESSION_SUMMARY_MAX_CHARS, r)
                    )
            except LiveMemoryError:
                stats = None
        line = health_banner(
            health, stats, server_url=f"http://{self.settings.host}:{self.settings.port}"
        )
        return {"banner": line, "summary": described.get("summary")}

    # --- server --------------------------------------------------------------------------
    async def health(self) -> dict[str, object]:
        reply: Future[list[str]] = Future()
        self.gateway.tell(ListWorkspaces(reply))
        active = await wait_reply(reply, self.reply_timeout_s)
        numbers = await self.blocking.run(self._health_numbers)
        endpoint = self.services.endpoint_report() if self.settings.provider else None
        return health_document(
            self.settings,
            uptime_s=time.time() - self.started_at,
            active=len(active),
            numbers=numbers,
            endpoint=endpoint,
            watcher=await self.watcher_status(),
            snapshot_error=self.store.write_error,
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
        a large tree or flushing a storm)."""
        if self.watcher is None:
            return None
        return self.watcher_board.read()

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
        if self.router is not None:
            from live_memory.ray_backend import disconnect  # noqa: PLC0415

            await asyncio.to_thread(disconnect)
        await asyncio.to_thread(self.blocking.close)
        self.stores.close()
