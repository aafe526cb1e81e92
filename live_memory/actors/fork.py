"""ForkActor: runs one question on a private copy of the window, then sends Commit back."""

from __future__ import annotations

import logging
import time
from concurrent.futures import CancelledError, Future
from dataclasses import dataclass
from typing import Any

from live_memory.actors.message import Cancel, Commit, ForkFailed, Route, StartFork
from live_memory.actors.runtime import Actor, ActorDeadError, ActorRef, ActorSystem
from live_memory.agent import QuestionJob, QuestionOutcome, Services, answer_question
from live_memory.tools import Toolbox

__all__ = ["ForkActor", "ForkCancelled"]

logger = logging.getLogger(__name__)


class ForkCancelled(Exception):
    """The asker went away (or the server is draining); the model call was cancelled."""


@dataclass(frozen=True, slots=True)
class _LoopDone:
    future: Future[QuestionOutcome]


class ForkActor(Actor):
    """Owns nothing shared: its window is a private copy taken at `base_version`."""

    kind = "fork"

    def __init__(
        self,
        system: ActorSystem,
        name: str,
        *,
        fork_id: int,
        workspace: ActorRef[Any],
        gateway: ActorRef[Any] | None,
        job: QuestionJob,
        services: Services,
        toolbox: Toolbox,
        base_version: int,
        base_seq: int,
    ) -> None:
        super().__init__(system, name, job.window.root)
        self.fork_id = fork_id
        self.workspace = workspace
        self.gateway = gateway
        self.job = job
        self.services = services
        self.toolbox = toolbox
        self.base_version = base_version
        self.base_seq = base_seq
        self.future: Future[QuestionOutcome] | None = None
        self.cancel_reason: str | None = None
        self.asked_at: float | None = None

    def on_receive(self, message: Any) -> Any:
        result = super().on_receive(message)
        if self.future is not None and not self.future.done() and self.asked_at is not None:
            # The question runs on the I/O loop, but it is this actor's message in hand: the
            # inventory (and the dashboard's stuck highlight) shows it until the answer.
            self.info.current_message, self.info.busy_since = "StartFork", self.asked_at
        return result

    def handle(self, message: Any) -> None:
        if isinstance(message, StartFork):
            self._start()
        elif isinstance(message, _LoopDone):
            self._finish(message.future)
        elif isinstance(message, Cancel):
            self.cancel_reason = message.reason
            if self.future is not None:
                self.future.cancel()
        else:
            super().handle(message)

    def _start(self) -> None:
        if self.cancel_reason is not None:
            self._report_failure(ForkCancelled(self.cancel_reason))
            return
        coro = answer_question(self.job, self.services, self.toolbox)
        self.asked_at = time.monotonic()
        self.future = self.system.io.submit(coro)
        ref = self.actor_ref
        self.future.add_done_callback(lambda f: ref.tell(_LoopDone(f)))

    def _finish(self, future: Future[QuestionOutcome]) -> None:
        try:
            outcome = future.result()
        except CancelledError:
            self._report_failure(ForkCancelled(self.cancel_reason or "cancelled"))
            return
        except Exception as exc:  # a provider or tool failure becomes the asker's error
            logger.warning("fork %s failed: %s", self.info.name, exc)
            self._report_failure(exc)
            return
        window = outcome.window
        ttl = self.job.cache_ttl
        self._report(Commit(self.fork_id, self.base_version, self.base_seq, window, outcome, ttl))

    def _report_failure(self, error: BaseException) -> None:
        self._report(ForkFailed(self.fork_id, error))

    def _report(self, message: Commit | ForkFailed) -> None:
        """To the workspace that started us; if that incarnation is gone (a supervisor
        restart), by name through the gateway to the one that adopted this fork."""
        try:
            self.workspace.tell(message)
        except ActorDeadError:
            if self.gateway is not None:
                self.gateway.tell(Route(self.job.window.root, message))
        self.stop()
