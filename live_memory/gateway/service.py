"""The edge's view of the actor system: validates input, sends messages, awaits replies.

Shared by the MCP tools and the REST routes; holds no workspace state itself. What every
request goes through is in service_base.py, the server-wide parts in service_server.py.
"""

from __future__ import annotations

import asyncio
import logging
import time
from concurrent.futures import Future
from pathlib import Path

from live_memory.actors import (
    Answer,
    Ask,
    Clear,
    ClearAll,
    ClearAllStarted,
    DescribeMemory,
    DrainTranscripts,
    ExportLedger,
    GetStats,
    ImportFacts,
    Notify,
    NotifyOutcome,
    Reset,
    Route,
)
from live_memory.agent import QuestionProgress, clamp_answer_tokens
from live_memory.config import canonical_workspace
from live_memory.config import constants as C
from live_memory.errors import (
    InputError,
    LiveMemoryError,
    RefusedRoot,
    ShuttingDown,
    UnknownWorkspace,
)
from live_memory.gateway import ask_arguments
from live_memory.gateway.bodies import import_body, transcript_body
from live_memory.gateway.notify_batch import content_chars
from live_memory.gateway.notify_parse import parse_notify
from live_memory.gateway.service_server import ServerSide
from live_memory.knowledge import digest_transcript, health_banner

__all__ = ["LiveMemoryService"]

logger = logging.getLogger(__name__)


class LiveMemoryService(ServerSide):
    """One per app: owns the actor system for the app's lifetime."""

    # --- questions -----------------------------------------------------------------------
    def check_ask(
        self, question: object, cwd: object, max_answer_tokens: object = None
    ) -> tuple[str, str, int]:
        """Validate a question's arguments: (question, cwd, answer tokens).

        Raises InputError, PayloadTooLarge, ShuttingDown or NoProviderConfigured.
        """
        text = ask_arguments.question(question, self.settings.max_question_chars)
        where = ask_arguments.cwd(cwd)
        # Fail fast: relative, missing, a file, `/` or a home directory.
        canonical_workspace(where, self.settings, canonicalize=False)
        requested = ask_arguments.answer_tokens(max_answer_tokens)
        tokens = clamp_answer_tokens(requested, self.settings.max_answer_tokens)
        if self.closing:
            raise ShuttingDown("the server is shutting down")
        self.services.require_provider()
        return text, where, tokens

    async def ask(
        self,
        question: object,
        cwd: object,
        max_answer_tokens: object = None,
        progress: QuestionProgress | None = None,
    ) -> Answer:
        """Answer a question (its loop reports on `progress`, if given). Raises InputError,
        NoProviderConfigured, ProviderError, ShuttingDown, Busy, or TimeoutError at the hard
        backstop."""
        # The check stats the workspace directory on the loop: a hop to the blocking pool per
        # question delayed admission enough to reorder a burst (a full queue then 429'd fewer).
        text, where, tokens = self.check_ask(question, cwd, max_answer_tokens)
        # The latest the answer may come: a local server's question plans its own budget
        # from the prompt it sends, within this (answer_question).
        budget = self.services.budget(tokens).waits_s
        reply: Future[Answer] = Future()
        self._asking.add(reply)
        reply.add_done_callback(self._asking.discard)
        self._send(where, Ask(text, tokens, time.monotonic() + budget, reply, progress))
        try:
            return await self._reply(reply, budget + C.HARD_DEADLINE_MARGIN_S)
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
    def notify_held(self, body: object, *, gather: bool = True) -> NotifyOutcome | None:
        """/notify without waiting on the workspace: parse the body (raising InputError or
        PayloadTooLarge) and hand the events to a workspace actor this edge holds a live
        handle for. None when it holds none: `notify` resolves the workspace first; None
        too while that actor is NOTIFY_BACKLOG_MAX_BYTES of content behind: `notify` then
        waits for it to apply the batch (backpressure instead of a growing mailbox).

        What the 200 then promises: the batch was valid and is queued for the loaded
        workspace, so it is applied before any later request to that workspace is handled
        (a /stats or a question sees it); every event counts as accepted. Whether an event
        changed memory (a secret path, an unchanged file) is the actor's business, as is
        its snapshot, which was always debounced. Saves the round trip to the actor thread
        and back per hook request. With `gather` (the protocol's direct path, on the event
        loop) the events wait up to 25 ms for others (gateway/notify_batch), so a
        burst of hook requests wakes the actor once instead of once each."""
        cwd, events = parse_notify(body, max_events=self.settings.max_notify_events)
        if not events:
            return NotifyOutcome(0, 0)
        ref = self._handles.get(cwd)
        if ref is not None and self._backlog.full(ref.actor_urn):
            return None  # the actor is behind: `notify` waits for it to apply this batch
        if gather:
            held = self._gather_held(cwd, tuple(events))
        else:
            if self._batch:
                self.flush_notifications()  # keep the order with gathered ones
            held = self._tell_held(cwd, Notify(tuple(events)))
        if not held:
            return None
        if ref is not None:
            self._backlog.told(ref.actor_urn, content_chars(events))
        return NotifyOutcome(len(events), 0)

    async def notify(self, body: object) -> NotifyOutcome:
        held = self.notify_held(body, gather=False)
        if held is not None:
            return held
        cwd, events = parse_notify(body, max_events=self.settings.max_notify_events)
        ref = self._handles.get(cwd)
        mark = self._backlog.told(ref.actor_urn, content_chars(events)) if ref else None
        try:
            # A workspace is created by a question, never by a notification (the design's
            # "/notify only applies to an already-loaded workspace"): one with neither live
            # state nor a snapshot ignores them. Counted by the actor itself.
            outcome: NotifyOutcome = await self._call(
                cwd, lambda r: Notify(tuple(events), r), activate=False
            )
        except UnknownWorkspace:
            return NotifyOutcome(0, len(events))
        if ref is not None and mark is not None:  # applied in order: all told before it too
            self._backlog.applied(ref.actor_urn, mark)
        return outcome

    async def stats(self, cwd: object) -> dict[str, object]:
        return await self._call(cwd, GetStats, activate=False)

    async def reset(self, cwd: object) -> dict[str, object]:
        return await self._call(cwd, Reset)

    async def clear(self, cwd: object) -> dict[str, object]:
        return await self._call(cwd, Clear)

    async def clear_all(self) -> dict[str, object]:
        """Wipe every known workspace, loaded or only stored: memory, snapshot, facts, and
        the structural index of those not loaded (a loaded one's mirrors its files as they
        are). Answers `{"cleared": N, "loaded": L, "stored": S}`."""
        if self.settings.backend != "local":
            raise InputError(
                'clearing all workspaces needs LIVE_MEMORY_BACKEND=local; with ray, send {"cwd"} '
                "for each workspace"
            )
        if self._batch:
            self.flush_notifications()  # a gathered notification lands before the wipe
        reply: Future[ClearAllStarted] = Future()
        self.gateway.tell(ClearAll(reply))
        started = await self._reply(reply, self.reply_timeout_s)
        for loaded in started.loaded:
            await self._reply(loaded, self.reply_timeout_s)
        total = len(started.loaded) + started.stored
        return {"cleared": total, "loaded": len(started.loaded), "stored": started.stored}

    # --- knowledge ------------------------------------------------------------------------
    async def enqueue(self, body: object) -> dict[str, object]:
        """Queue a finished session's transcript for background distillation.

        Raises InputError / TranscriptError (422) for a bad body or unreadable transcript.
        """
        cwd, session, path = transcript_body(body)
        root = await self.blocking.run(canonical_workspace, cwd, self.settings)
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
        return await self._call(
            cwd, lambda r: ImportFacts(facts, r), timeout_s=C.IMPORT_REPLY_TIMEOUT_S
        )

    async def banner(
        self, cwd: object, *, summary: bool, activate: bool = False
    ) -> dict[str, object]:
        """The session-start banner line (and, when asked, a short memory summary). With
        `activate` (POST /api/open: a session starts there) the workspace is loaded first, so
        the reads teed before its first question are kept, not dropped as for an unknown one."""
        stats: dict[str, object] | None = None
        described: dict[str, object] = {"summary": None}
        refused: str | None = None
        if activate:  # a bad cwd is the caller's error (422), not a banner without stats
            try:
                canonical_workspace(ask_arguments.cwd(cwd), self.settings, canonicalize=False)
            except RefusedRoot as exc:  # told in the banner, as for any entry
                refused, activate = str(exc), False
        if isinstance(cwd, str) and cwd:
            try:
                stats = await self._call(cwd, GetStats, activate=activate)
                if summary:
                    described = await self._call(
                        cwd, lambda r: DescribeMemory(C.SESSION_SUMMARY_MAX_CHARS, r)
                    )
            except RefusedRoot as exc:  # the session should know it gets no answers here
                refused = str(exc)
            except LiveMemoryError:
                stats = None
        health = await self.health()  # after an activation: it counts the opened workspace
        line = health_banner(
            health,
            stats,
            server_url=f"http://{self.settings.host}:{self.settings.port}",
            refused=refused,
        )
        return {"banner": line, "summary": described.get("summary")}
