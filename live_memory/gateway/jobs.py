"""Async question jobs behind `ask_live_memory_submit` / `ask_live_memory_result`.

MCP has no native background tool calls, so the agent submits, gets a job id, and polls.
Results are collected once; finished jobs nobody collects are swept after a TTL.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from live_memory.config import constants as C
from live_memory.errors import UnknownJob

__all__ = ["JobRunner"]

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class _Job:
    task: asyncio.Task[str]
    created: float
    finished: float | None = None


class JobRunner:
    """Lives on the gateway's event loop; not thread-safe (it needs no lock there)."""

    def __init__(
        self, ttl_s: float = C.ASYNC_JOB_TTL_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._jobs: dict[str, _Job] = {}
        self._ttl = ttl_s
        self._clock = clock

    def submit(self, work: Coroutine[Any, Any, str]) -> str:
        self.sweep()
        job_id = uuid.uuid4().hex
        job = _Job(asyncio.ensure_future(work), self._clock())
        job.task.add_done_callback(lambda _: self._finished(job))
        self._jobs[job_id] = job
        return job_id

    def _finished(self, job: _Job) -> None:
        job.finished = self._clock()

    def result(self, job_id: str) -> str | None:
        """The answer (collected once), None while running; raises the job's own error,
        or UnknownJob for an id never issued, already collected, or swept."""
        self.sweep()
        job = self._jobs.get(job_id)
        if job is None:
            raise UnknownJob(
                f"unknown job id {job_id!r}: never issued, already collected, or expired"
            )
        if not job.task.done():
            return None
        del self._jobs[job_id]
        return job.task.result()

    def sweep(self) -> None:
        now = self._clock()
        expired = [
            job_id
            for job_id, job in self._jobs.items()
            if job.finished is not None and now - job.finished > self._ttl
        ]
        for job_id in expired:
            job = self._jobs.pop(job_id)
            if not job.task.cancelled() and job.task.exception() is not None:
                logger.info("swept failed job %s: %s", job_id, job.task.exception())

    def __len__(self) -> int:
        return len(self._jobs)

    async def aclose(self) -> None:
        for job in self._jobs.values():
            job.task.cancel()
        await asyncio.gather(*(j.task for j in self._jobs.values()), return_exceptions=True)
        self._jobs.clear()
