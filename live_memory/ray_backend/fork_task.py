"""A fork as a Ray task: one question's agent loop in a Ray worker process, on plain data.

The workspace actor (in its host) hands a fork a `ForkJob`: the private window copy taken at
the fork's base version, the question, its limits (seconds left, never a monotonic deadline:
another process's clock), the cache decision and the settings. `run_fork` runs the unchanged
agent loop (`answer_question`) in whatever Ray worker the task lands on and returns a
`ForkRun`: the finished window and Q/A, plus where it ran. Nothing live crosses: the worker
builds its own provider client and tools from the settings, once per process (Ray reuses a
worker for the next task), and the workspace actor applies the returned outcome as a Commit,
by WorkspaceState's optimistic version rule, exactly as it applies a local Fork's.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from live_memory.actors import IoLoop
from live_memory.agent import (
    QuestionJob,
    QuestionOutcome,
    Services,
    Stores,
    answer_question,
    build_services,
)
from live_memory.config import Settings
from live_memory.config import constants as C
from live_memory.knowledge import TranscriptQueue, UsageLedger
from live_memory.memory import Window
from live_memory.providers import CacheTtl
from live_memory.tools import Toolbox

__all__ = ["ForkJob", "ForkRun", "run_fork"]


@dataclass(frozen=True, slots=True)
class ForkJob:
    root: str
    settings: Settings
    question: str
    window: Window
    """The fork's private copy, taken at the base version the commit names."""
    recently_modified: tuple[str, ...]
    budget_s: float
    """Seconds left of the question's soft budget when the fork was started."""
    max_answer_tokens: int
    workspace_key: str
    cache_ttl: CacheTtl | None
    cache_min_tokens: int


@dataclass(frozen=True, slots=True)
class ForkRun:
    outcome: QuestionOutcome
    pid: int
    node_id: str
    task_id: str
    run_s: float


@dataclass
class _Worker:
    """What one Ray worker process keeps between forks: the services (provider client,
    stores) of one settings value, the I/O loop its SDK client is bound to, and toolboxes."""

    settings: Settings
    services: Services
    io: IoLoop
    toolboxes: dict[str, Toolbox]

    def toolbox(self, root: str) -> Toolbox:
        box = self.toolboxes.get(root)
        if box is None:
            if len(self.toolboxes) >= C.RAY_FORK_TOOLBOXES_MAX:
                self.toolboxes.pop(next(iter(self.toolboxes)))
            settings = self.settings
            box = self.toolboxes[root] = Toolbox(
                Path(root),
                secret_patterns=settings.secret_path_patterns,
                file_globs=settings.file_globs,
                max_output_chars=self.services.tool_output_chars,
                vendored=settings.include_vendored,
            )
        return box


_worker: _Worker | None = None
_worker_lock = threading.Lock()


def _worker_for(settings: Settings) -> _Worker:
    """This process's worker state for `settings` (built again after a reload)."""
    global _worker  # noqa: PLW0603  (one per Ray worker process, by design)
    with _worker_lock:
        if _worker is None or _worker.settings != settings:
            if _worker is not None:
                _worker.io.stop()
                _worker.services.stores.close()
            stores = Stores(
                UsageLedger(settings.data_dir / C.USAGE_FILE_NAME),
                TranscriptQueue(settings.data_dir / C.TRANSCRIPT_QUEUE_FILE_NAME),
            )
            _worker = _Worker(settings, build_services(settings, stores), IoLoop(), {})
        return _worker


def run_fork(job: ForkJob) -> ForkRun:
    """The Ray task's body: answer `job.question` on `job.window`. A provider or tool
    failure raises (Ray carries it back to the workspace actor as the fork's failure); a
    cancelled task (`ray.cancel`) cancels the question's coroutine too."""
    import ray  # noqa: PLC0415  (only ever imported inside a Ray worker)

    began = time.monotonic()
    worker = _worker_for(job.settings)
    question = QuestionJob(
        question=job.question,
        window=job.window,
        recently_modified=job.recently_modified,
        soft_deadline=began + job.budget_s,
        max_answer_tokens=job.max_answer_tokens,
        workspace_key=job.workspace_key,
        cache_ttl=job.cache_ttl,
        cache_min_tokens=job.cache_min_tokens,
    )
    future = worker.io.submit(answer_question(question, worker.services, worker.toolbox(job.root)))
    try:
        outcome = future.result()
    finally:  # ray.cancel interrupts the wait above: stop the model call as well
        future.cancel()
    context = ray.get_runtime_context()
    return ForkRun(
        outcome,
        os.getpid(),
        context.get_node_id(),
        context.get_task_id() or "",
        time.monotonic() - began,
    )
