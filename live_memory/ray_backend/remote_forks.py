"""The Ray host's workspace actor: its forks run as Ray tasks, their commits come back to it.

Locally a fork is a Fork on the workspace's own process's I/O loop. Here `launch_fork` sends the
fork's plain `ForkJob` (window copy, question, limits) as a Ray task (`fork_task.run_fork`)
pinned to this host's node (the node holds the checkout the tools read; the window copy is
already in its object store), with no CPU claimed (a fork waits on the model) and no Ray
retry (a model call costs money: a fork whose worker died fails its question instead). The
task's result is turned into the same `Commit` (or `ForkFailed`) a local Fork sends, and the
workspace applies it by WorkspaceState's optimistic version rule, unchanged: a fork that
started at an older version merges as any concurrent fork does.

A cancelled fork (the asker went away, a drain) is `ray.cancel`led. A fork that outlives the
incarnation that started it (a supervisor restart) reports by name to the one that adopted it,
as a local Fork does. Where each recent fork ran (pid, node, task id) is kept for /actors.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

import ray
from ray.exceptions import RayTaskError, TaskCancelledError
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from live_memory.actors import ActorDeadError, Commit, ForkCancelled, ForkFailed, Route
from live_memory.agent import QuestionJob
from live_memory.config import constants as C
from live_memory.errors import WorkspaceUnavailable
from live_memory.ray_backend.durable import DurableWorkspaceActor
from live_memory.ray_backend.fork_task import ForkJob, ForkRun, run_fork
from live_memory.workspace import StartFork

__all__ = ["FORK_RUNS", "RayWorkspaceActor"]

logger = logging.getLogger(__name__)

FORK_RUNS: deque[dict[str, object]] = deque(maxlen=C.RAY_RECENT_FORKS_MAX)
"""Where this host's recent forks ran (one host process serves one workspace)."""

_fork_task: Any = None


def _task() -> Any:
    global _fork_task  # noqa: PLW0603  (one remote function per process)
    if _fork_task is None:
        _fork_task = ray.remote(run_fork)
    return _fork_task


@dataclass(frozen=True, slots=True)
class _RemoteForkDone:
    """A fork task's report, turned into its Commit or ForkFailed on the actor's thread."""

    report: Commit | ForkFailed
    where: dict[str, object]


class RayWorkspaceActor(DurableWorkspaceActor):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.remote_forks: dict[int, Any] = {}
        """fork id -> the object ref of its running task"""
        self.cancel_reasons: dict[int, str] = {}
        super().__init__(*args, **kwargs)

    def launch_fork(self, spec: StartFork, job: QuestionJob) -> None:
        if job.retrievers or job.core_map is not None:
            # Live store handles cannot cross to another process: run where they are.
            super().launch_fork(spec, job)
            return
        plain = ForkJob(
            root=self.root,
            settings=self.services.settings,
            question=job.question,
            window=job.window,
            recently_modified=job.recently_modified,
            budget_s=job.soft_deadline - time.monotonic(),
            max_answer_tokens=job.max_answer_tokens,
            workspace_key=job.workspace_key,
            cache_ttl=job.cache_ttl,
            cache_min_tokens=job.cache_min_tokens,
        )
        here = ray.get_runtime_context().get_node_id()
        ref = (
            _task()
            .options(
                num_cpus=0,
                max_retries=0,
                scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=False),
                name=f"fork-{spec.fork_id}",
            )
            .remote(plain)
        )
        self.remote_forks[spec.fork_id] = ref
        done: Future[None] = self.system.io.submit(self._await_fork(spec, ref, job))
        done.add_done_callback(_log_failure)

    async def _await_fork(self, spec: StartFork, ref: Any, job: QuestionJob) -> None:
        where: dict[str, object] = {"fork_id": spec.fork_id}
        report: Commit | ForkFailed
        try:
            run: ForkRun = await ref
        except TaskCancelledError:
            reason = self.cancel_reasons.get(spec.fork_id, "cancelled")
            report = ForkFailed(spec.fork_id, ForkCancelled(reason))
        except RayTaskError as exc:  # the question's own failure (provider, tool, budget)
            cause = exc.cause if isinstance(exc.cause, BaseException) else exc
            report = ForkFailed(spec.fork_id, cause)
        except Exception as exc:  # the worker died, the node went away
            lost = WorkspaceUnavailable(f"the fork's task failed: {exc}")
            report = ForkFailed(spec.fork_id, lost)
        else:
            outcome = run.outcome
            speed = self.services.speed  # learnt here: the next question's budget follows it
            for timings in outcome.loop.timings:
                speed.observe_call(timings)
            speed.observe_question(outcome.loop.iterations)
            where |= {
                "pid": run.pid,
                "node_id": run.node_id,
                "task_id": run.task_id,
                "run_s": round(run.run_s, 3),
            }
            base = (spec.base_version, spec.base_seq)
            report = Commit(spec.fork_id, *base, outcome.window, outcome, job.cache_ttl)
        done = _RemoteForkDone(report, where)
        try:
            self.actor_ref.tell(done)
        except ActorDeadError:  # a supervisor restart: the next incarnation adopted the fork
            self.gateway.tell(Route(self.root, report))

    def handle(self, message: Any) -> None:
        if isinstance(message, _RemoteForkDone):
            fork_id = message.report.fork_id
            self.remote_forks.pop(fork_id, None)
            self.cancel_reasons.pop(fork_id, None)
            FORK_RUNS.append(message.where | {"committed": isinstance(message.report, Commit)})
            message = message.report
        super().handle(message)

    def cancel_fork(self, fork_id: int, reason: str) -> None:
        ref = self.remote_forks.get(fork_id)
        if ref is None:
            super().cancel_fork(fork_id, reason)
            return
        self.cancel_reasons[fork_id] = reason
        try:
            ray.cancel(ref)
        except Exception:  # finished meanwhile: its report is on its way
            logger.debug("cancelling a finished fork task", exc_info=True)


def _log_failure(done: Future[None]) -> None:
    if not done.cancelled() and done.exception() is not None:
        logger.error("a fork task's report was lost", exc_info=done.exception())
