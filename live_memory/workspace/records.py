"""The plain records a workspace's events and effects carry (no futures, no actor refs)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from live_memory.agent import Source
from live_memory.providers import Usage

__all__ = ["Answer", "EventKind", "FileEvent", "NotifyOutcome", "Question"]

EventKind = Literal["read", "write", "change", "add", "unlink", "modified"]


@dataclass(frozen=True, slots=True)
class FileEvent:
    """One file-change notification, already parsed from `/notify` or the OS watcher."""

    path: str
    """Absolute, or relative to the workspace root."""
    kind: EventKind
    content: str | None = None


@dataclass(frozen=True, slots=True)
class Question:
    """An admitted question. `slot` names its asker's reply slot; the shell maps it."""

    slot: int
    question: str
    max_answer_tokens: int
    soft_deadline: float
    """time.monotonic() by which a (best-effort) answer must be on its way back."""


@dataclass(frozen=True, slots=True)
class Answer:
    """What the asker gets back."""

    text: str
    """The answer followed by the trailer: the MCP tool result."""
    answer: str
    model: str
    latency_s: float
    usage: Usage
    tool_calls: int
    files_read: int
    cost_usd: float | None
    context_pct: float
    timed_out: bool
    stop_reason: str
    provider_s: float = 0.0
    sources: tuple[Source, ...] = ()
    """The files and line ranges the answer rests on, checked when it was given."""


@dataclass(frozen=True, slots=True)
class NotifyOutcome:
    accepted: int
    ignored: int
