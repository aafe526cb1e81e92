"""Actor messages and results: frozen, slotted dataclasses named for their intent."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from live_memory.actors.runtime import Promise
from live_memory.agent import QuestionProgress
from live_memory.memory import CommitOutcome
from live_memory.providers import CacheTtl, Usage
from live_memory.workspace import Answer, EventKind, FileEvent, NotifyOutcome

__all__ = [
    "AdoptFork",
    "Answer",
    "Ask",
    "Clear",
    "ClearAll",
    "ClearAllStarted",
    "Commit",
    "CommitOutcome",
    "DescribeMemory",
    "Drain",
    "DrainTranscripts",
    "EventKind",
    "ExportLedger",
    "FactsMerged",
    "FileEvent",
    "ForkFailed",
    "GetStats",
    "GetWatcherStatus",
    "IdleCheck",
    "ImportFacts",
    "KeepWarmTick",
    "ListWorkspaces",
    "Notify",
    "NotifyOutcome",
    "Passivate",
    "Passivated",
    "PingDone",
    "RequestPassivation",
    "Reset",
    "RestartWorkspace",
    "Revalidate",
    "Route",
    "SlotCancelled",
    "TranscriptDistilled",
    "UnwatchRoot",
    "UpdateServices",
    "WatchRoot",
]


# --- to the gateway actor -----------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Route:
    """Resolve `cwd` to its workspace actor (activating it when allowed) and forward."""

    cwd: str
    message: Any
    activate_unknown: bool = True
    """False: a workspace with neither live state nor a snapshot is an UnknownWorkspace."""
    handle: Promise[Any] | None = None
    """Filled with the workspace actor's ref, so the edge can address it directly next time
    (Ray-style handles); the gateway stays the authority on names."""


@dataclass(frozen=True, slots=True)
class RequestPassivation:
    root: str


@dataclass(frozen=True, slots=True)
class RestartWorkspace:
    """A workspace actor's handler raised: its state may be inconsistent, so the gateway
    (its supervisor) replaces it with a fresh actor restored from the last snapshot."""

    root: str
    failures: int
    last_error: str


@dataclass(frozen=True, slots=True)
class Passivated:
    root: str


@dataclass(frozen=True, slots=True)
class ListWorkspaces:
    reply: Promise[list[str]]
    cap: Promise[dict[str, int]] | None = None
    """The local gateway's cap on active workspaces and its admissions over it (/health)."""


@dataclass(frozen=True, slots=True)
class Drain:
    """Shutdown: stop admitting, let forks finish up to `grace_s`, flush snapshots."""

    grace_s: float
    reply: Promise[None]


# --- to workspace actors ------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Ask:
    question: str
    max_answer_tokens: int
    soft_deadline: float
    """time.monotonic() by which a (best-effort) answer must be on its way back."""
    reply: Promise[Answer]
    progress: QuestionProgress | None = None
    """Where the question's loop says what it is doing (the MCP tool's progress reports);
    stays in this process (the Ray wire does not carry it)."""


@dataclass(frozen=True, slots=True)
class Notify:
    events: tuple[FileEvent, ...]
    reply: Promise[NotifyOutcome] | None = None


@dataclass(frozen=True, slots=True)
class GetStats:
    reply: Promise[dict[str, object]]


@dataclass(frozen=True, slots=True)
class Reset:
    """Wipe memory and snapshot, then re-read the preload globs now."""

    reply: Promise[dict[str, object]]


@dataclass(frozen=True, slots=True)
class Clear:
    """Wipe memory and snapshot; preload happens lazily on the next question."""

    reply: Promise[dict[str, object]]


@dataclass(frozen=True, slots=True)
class ClearAll:
    """To the gateway: wipe every known workspace. Loaded (and passivating) ones get `Clear`;
    the stored ones (snapshot, facts, structural index) are deleted by the gateway itself,
    where no activation can interleave."""

    reply: Promise[ClearAllStarted]


@dataclass(frozen=True, slots=True)
class ClearAllStarted:
    loaded: tuple[Promise[dict[str, object]], ...]
    """The `Clear` replies of the loaded and passivating workspaces."""
    stored: int
    """Workspaces that were only on disk, now deleted there."""


@dataclass(frozen=True, slots=True)
class Commit:
    """A fork's finished question: its window (taken at `base_version`) plus the Q/A."""

    fork_id: int
    base_version: int
    base_seq: int
    window: Any
    result: Any
    cache_ttl: CacheTtl | None = None


@dataclass(frozen=True, slots=True)
class SlotCancelled:
    """The asker behind reply slot `slot` went away (timeout, disconnect)."""

    slot: int


@dataclass(frozen=True, slots=True)
class AdoptFork:
    """A fork of a restarted incarnation: its commit lands on this one and answers `reply`."""

    fork_id: int
    base_version: int
    reply: Promise[Answer]


@dataclass(frozen=True, slots=True)
class ForkFailed:
    fork_id: int
    error: BaseException


@dataclass(frozen=True, slots=True)
class IdleCheck:
    idle_after_s: float


@dataclass(frozen=True, slots=True)
class Passivate:
    flush: bool = True
    """False for a supervisor restart: the in-memory state is suspect; the snapshot wins."""


@dataclass(frozen=True, slots=True)
class KeepWarmTick:
    interval_s: float
    max_idle_s: float


@dataclass(frozen=True, slots=True)
class PingDone:
    usage: Usage | None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class UpdateServices:
    """A configuration reload: new forks use `services`; in-flight ones finish on the old."""

    services: Any


# --- to the watchdog actor ----------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class WatchRoot:
    """A workspace was activated: watch its root."""

    root: str


@dataclass(frozen=True, slots=True)
class UnwatchRoot:
    """A workspace was passivated: stop watching its root."""

    root: str


@dataclass(frozen=True, slots=True)
class Revalidate:
    """From the watcher to a workspace: `files` - re-check every file the window holds
    against the disk (a change storm too big to route path by path, or a root polled
    instead of watched); `tree_stale` - HEAD moved or many files came or went, so the
    directory tree is rebuilt at the next freeze (never between two); `watches_placed` - the
    root's OS watches are in place only now: a change made since the workspace activated
    reached no one, so the structural index looks at every file again too."""

    files: bool = True
    tree_stale: bool = False
    watches_placed: bool = False


@dataclass(frozen=True, slots=True)
class GetWatcherStatus:
    """`/health`: {"mode": "inotify"|"fsevents"|"windows"|"polling"|"off", "roots": N,
    "degraded_reason": str|None}."""

    reply: Promise[dict[str, object]]


# --- knowledge ----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class DrainTranscripts:
    """Nudge: distil queued transcripts in the background when idle and within budget."""


@dataclass(frozen=True, slots=True)
class TranscriptDistilled:
    row_id: int
    text: str | None
    usage: Usage | None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class ExportLedger:
    reply: Promise[dict[str, object]]


@dataclass(frozen=True, slots=True)
class ImportFacts:
    facts: tuple[Any, ...]
    """LedgerFact records."""
    reply: Promise[dict[str, object]]


@dataclass(frozen=True, slots=True)
class FactsMerged:
    """An import's store merge finished off the actor; the window learns the facts now."""

    facts: tuple[Any, ...]
    """LedgerFact records."""
    stored: Any
    """The store's MergeReport, or None (no store, or it failed)."""
    wiped_at_version: int
    """The state's wipe marker when the merge started: a wipe since drops the import."""
    reply: Promise[dict[str, object]]


@dataclass(frozen=True, slots=True)
class DescribeMemory:
    """A short, budgeted summary of what the memory knows (session-start context)."""

    max_chars: int
    reply: Promise[dict[str, object]]
