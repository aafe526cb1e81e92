"""What a WorkspaceState asks its shell to do: frozen, picklable records.

Reply slots are plain integers the shell maps to its own reply mechanism (futures today), so
the same state machine can sit behind another actor runtime.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from live_memory.memory import Window
from live_memory.providers import CacheTtl, Usage

__all__ = [
    "Account",
    "CancelFork",
    "DeleteSnapshot",
    "Drained",
    "Effect",
    "Fail",
    "Forward",
    "Persist",
    "ReadFiles",
    "Reply",
    "StartFork",
    "WantDistil",
    "WantPassivation",
    "WriteInsights",
]


@dataclass(frozen=True, slots=True)
class StartFork:
    """Run `question` on `window` (a private copy taken at `base_version`/`base_seq`)."""

    fork_id: int
    slot: int
    question: str
    window: Window
    recently_modified: tuple[str, ...]
    soft_deadline: float
    max_answer_tokens: int
    base_version: int
    base_seq: int


@dataclass(frozen=True, slots=True)
class CancelFork:
    fork_id: int
    reason: str


@dataclass(frozen=True, slots=True)
class Reply:
    """Resolve reply slot `slot` with `value` (a cancelled slot is simply skipped)."""

    slot: int
    value: Any


@dataclass(frozen=True, slots=True)
class Fail:
    """Resolve reply slot `slot` with the error `error`."""

    slot: int
    error: BaseException


@dataclass(frozen=True, slots=True)
class Persist:
    """Write `snapshot`; the shell reports the outcome back with `persisted(ticket, error)`."""

    ticket: int
    snapshot: dict[str, object]


@dataclass(frozen=True, slots=True)
class DeleteSnapshot:
    pass


@dataclass(frozen=True, slots=True)
class Account:
    """Record spend (the budget ledger) and cache observations for one model exchange."""

    usage: Usage
    cost_usd: float | None
    question: bool
    usage_by_call: tuple[Usage, ...] = ()
    cache_ttl: CacheTtl | None = None


@dataclass(frozen=True, slots=True)
class WriteInsights:
    """Export the ledger to the insights markdown files."""


@dataclass(frozen=True, slots=True)
class WantDistil:
    """The workspace is idle: the shell may start the next transcript distillation."""


@dataclass(frozen=True, slots=True)
class WantPassivation:
    """Idle for long enough: ask the supervisor to passivate this workspace."""


@dataclass(frozen=True, slots=True)
class Forward:
    """Hand `question` to the next incarnation (passivation with questions waiting)."""

    question: Any


@dataclass(frozen=True, slots=True)
class ReadFiles:
    """Re-read `paths` ((workspace-relative path, ticket) pairs) off the actor once the
    monotonic clock reaches `not_before`; report one `Reread` per path with
    `reread_done` (the server's own read: the Read tool's jail, caps and redaction)."""

    paths: tuple[tuple[str, int], ...]
    not_before: float


@dataclass(frozen=True, slots=True)
class Drained:
    """The drain requested with reply slot `slot` is complete."""

    slot: int


Effect = (
    StartFork
    | CancelFork
    | Reply
    | Fail
    | Persist
    | DeleteSnapshot
    | Account
    | WriteInsights
    | WantDistil
    | WantPassivation
    | Forward
    | Drained
    | ReadFiles
)
