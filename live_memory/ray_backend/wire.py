"""What crosses a process boundary to a workspace actor on Ray: plain, picklable records.

The local backend's messages carry reply slots (`concurrent.futures.Future`), which live in one
process. Over Ray a request is one of these records instead, sent as the argument of a Ray
actor call; the call's object ref is the reply slot. The workspace actor's host turns a record
back into the local message with a slot of its own (`request_message`), so the same
WorkspaceActor and WorkspaceState serve both backends unchanged.

A deadline crosses as seconds left (`budget_s`), never as a `time.monotonic()` value: clocks of
two processes (or machines) are not comparable.
"""

from __future__ import annotations

import time
import uuid
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from live_memory.actors import (
    Ask,
    Clear,
    DescribeMemory,
    DrainTranscripts,
    ExportLedger,
    GetStats,
    ImportFacts,
    InspectWorkspace,
    Notify,
    Reset,
)

__all__ = [
    "AskRequest",
    "Outcome",
    "PlainRequest",
    "Request",
    "request_message",
    "to_request",
]


@dataclass(frozen=True, slots=True)
class AskRequest:
    question: str
    max_answer_tokens: int
    budget_s: float
    """Seconds left of the question's soft budget when it was sent."""
    key: str = ""
    """The question's idempotency key: the same on every re-send (see `answers`)."""


@dataclass(frozen=True, slots=True)
class PlainRequest:
    """Any other request: the local message's name and its fields but the reply slot."""

    kind: str
    fields: tuple[Any, ...] = ()


Request = AskRequest | PlainRequest

_PLAIN: dict[str, type[Any]] = {
    cls.__name__: cls
    for cls in (
        Notify,
        GetStats,
        Reset,
        Clear,
        ExportLedger,
        ImportFacts,
        DescribeMemory,
        InspectWorkspace,
    )
}
"""Requests answered through a reply slot (always the message's last field)."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """A call's result: `value`, or `error` (a LiveMemoryError the gateway re-raises)."""

    value: Any = None
    error: BaseException | None = None


def to_request(message: Any) -> Request | None:
    """The wire form of a local request message (None: not a workspace request)."""
    if isinstance(message, Ask):
        return AskRequest(
            message.question,
            message.max_answer_tokens,
            message.soft_deadline - time.monotonic(),
            uuid.uuid4().hex,
        )
    if isinstance(message, DrainTranscripts):
        return PlainRequest("DrainTranscripts")
    name = type(message).__name__
    if name not in _PLAIN:
        return None
    fields = tuple(getattr(message, slot) for slot in type(message).__slots__ if slot != "reply")
    return PlainRequest(name, fields)


def request_message(request: Request, reply: Future[Any]) -> Any:
    """The local message for `request`, answering into `reply` (DrainTranscripts resolves
    `reply` at once: it is a nudge, nothing answers it)."""
    if isinstance(request, AskRequest):
        deadline = time.monotonic() + request.budget_s
        return Ask(request.question, request.max_answer_tokens, deadline, reply)
    if request.kind == "DrainTranscripts":
        reply.set_result(None)
        return DrainTranscripts()
    cls = _PLAIN.get(request.kind)
    if cls is None:
        raise ValueError(f"unknown workspace request {request.kind!r}")
    return cls(*request.fields, reply)
