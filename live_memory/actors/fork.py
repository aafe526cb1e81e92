"""Fork: runs one question on a private copy of the window, then sends Commit back.

A fork is not a pykka actor: its whole life is one task on the I/O loop, so it has no
mailbox to schedule. The workspace starts the task itself and the task's done callback (on
the I/O loop) tells the workspace the Commit or ForkFailed. A question used to pass through
a ForkActor twice (its StartFork, then the loop's result), two thread hand-offs on the
answer's critical path that carried nothing. The fork is still listed in /actors (kind
"fork", the question in hand and for how long) while its task runs.
"""

from __future__ import annotations

import itertools
import logging
import time
from concurrent.futures import CancelledError, Future
from typing import Any

from live_memory.actors.message import Commit, ForkFailed, Route
from live_memory.actors.runtime import ActorDeadError, ActorInfo, ActorRef, ActorSystem
from live_memory.agent import QuestionJob, QuestionOutcome, Services, answer_question
from live_memory.tools import Toolbox

__all__ = ["Fork", "ForkCancelled"]

logger = logging.getLogger(__name__)

_INVENTORY_KEYS = itertools.count(1)
_QUESTION_SHOWN_MAX = 120
"""Characters of its question a running fork shows as its message in hand (/actors)."""


def _in_hand(question: str) -> str:
    """What /actors and the dashboard show a running fork doing: its question, on one line."""
    line = " ".join(question.split())
    if len(line) > _QUESTION_SHOWN_MAX:
        line = line[: _QUESTION_SHOWN_MAX - 1] + "…"
    return f"question: {line}"


class ForkCancelled(Exception):
    """The asker went away (or the server is draining); the model call was cancelled."""


class Fork:
    """Owns nothing shared: its window is a private copy taken at `base_version`.

    `start` and `cancel` run on the workspace's thread, the report on the I/O loop's (or on
    the canceller's, as a concurrent future runs its callbacks where it is cancelled); the
    workspace's mailbox is what serialises them.
    """

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
        self.system = system
        self.fork_id = fork_id
        self.workspace = workspace
        self.gateway = gateway
        self.job = job
        self.services = services
        self.toolbox = toolbox
        self.base_version = base_version
        self.base_seq = base_seq
        self.info = ActorInfo(name=name, kind="fork", workspace=job.window.root)
        self.key = f"fork:{next(_INVENTORY_KEYS)}"
        self.future: Future[QuestionOutcome] | None = None
        self.cancel_reason: str | None = None

    def start(self) -> None:
        """Submit the question to the I/O loop; its outcome is reported when it is done."""
        info = self.info
        info.current_message, info.busy_since = _in_hand(self.job.question), time.monotonic()
        self.system.register(self.key, info)
        try:
            coro = answer_question(self.job, self.services, self.toolbox)
            self.future = self.system.io.submit(coro)
        except BaseException:  # the workspace fails the question; nothing is left listed
            self.system.unregister(self.key)
            raise
        self.future.add_done_callback(self._done)

    def cancel(self, reason: str) -> None:
        """Cancel the model call; the fork reports ForkCancelled (unless it already finished)."""
        if self.cancel_reason is None:
            self.cancel_reason = reason
        if self.future is not None:
            self.future.cancel()

    def _done(self, future: Future[QuestionOutcome]) -> None:
        self.system.unregister(self.key)
        try:
            outcome = future.result()
        except CancelledError:
            self._report(ForkFailed(self.fork_id, ForkCancelled(self.cancel_reason or "cancelled")))
            return
        except Exception as exc:  # a provider or tool failure becomes the asker's error
            logger.warning("fork %s failed: %s", self.info.name, exc)
            self._report(ForkFailed(self.fork_id, exc))
            return
        base = (self.base_version, self.base_seq)
        self._report(Commit(self.fork_id, *base, outcome.window, outcome, self.job.cache_ttl))

    def _report(self, message: Commit | ForkFailed) -> None:
        """To the workspace that started us; if that incarnation is gone (a supervisor
        restart), by name through the gateway to the one that adopted this fork."""
        try:
            self.workspace.tell(message)
            return
        except ActorDeadError:
            pass
        if self.gateway is None:
            return
        try:
            self.gateway.tell(Route(self.job.window.root, message))
        except ActorDeadError:  # the server is shutting down: no one is left to tell
            logger.debug("fork %s finished after the gateway stopped", self.info.name)
