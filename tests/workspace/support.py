"""Driving a WorkspaceState without threads: a fork is played by hand from its StartFork."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from live_memory.agent.loop import LoopResult
from live_memory.agent.question import QuestionOutcome
from live_memory.memory.ingest import Ingestor
from live_memory.memory.window import Window
from live_memory.providers.types import Usage
from live_memory.tools.outcome import FileRead
from live_memory.workspace import Effect, Limits, Persist, StartFork, WorkspaceState

__all__ = ["LIMITS", "finish", "make_state", "of", "persist_all"]

LIMITS = Limits(
    concurrency=3,
    max_pending=4,
    max_context_tokens=200_000,
    refreeze_delta_share=0.25,
    manifest_debounce_s=5.0,
    notify_log_max_bytes=64 * 1024,
)


def make_state(root: Path, limits: Limits = LIMITS) -> WorkspaceState:
    state = WorkspaceState(str(root), Ingestor(root), limits, now=0.0)
    state.window.freeze()
    return state


def of(kind: type, effects: Iterable[Effect]) -> list:  # type: ignore[type-arg]
    return [e for e in effects if isinstance(e, kind)]


def finish(
    start: StartFork, answer: str = "an answer", *, reads: tuple[str, ...] = ()
) -> tuple[Window, QuestionOutcome]:
    """What a fork would commit: its private window with the Q/A appended."""
    window = start.window
    loop = LoopResult(
        answer=answer,
        usage=Usage(input_tokens=100, output_tokens=10),
        usage_by_call=[Usage(input_tokens=100, output_tokens=10)],
        reads=[FileRead(p, "0" * 64, 1) for p in reads],
        model="fake",
    )
    for read in loop.reads:
        window.record_read(read.path, read.sha256, read.size)
    window.append_qa(start.question, answer)
    outcome = QuestionOutcome(window, loop, answer, "[trailer]", 0.1, 0.001, 1.0, False, Usage())
    return window, outcome


def persist_all(
    state: WorkspaceState, effects: Iterable[Effect], error: str | None = None
) -> list[Effect]:
    """Carry out the Persist effects (as written, or refused with `error`); return the rest."""
    out: list[Effect] = []
    for effect in effects:
        if isinstance(effect, Persist):
            out += persist_all(state, state.persisted(effect.ticket, error), error)
        else:
            out.append(effect)
    return out
