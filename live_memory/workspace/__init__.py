"""One workspace's state as a plain object: events in, effects out (no threads, no I/O).

`WorkspaceState` owns the window, version, notify log, admission queue, in-flight forks,
counters and distil gate. An actor (today pykka's, later another runtime's) feeds it events
and carries out the effects it returns; both are plain, picklable records.
"""

from __future__ import annotations

from live_memory.memory import Reread
from live_memory.workspace.counters import WorkspaceCounters
from live_memory.workspace.effects import (
    Account,
    CancelFork,
    DeleteSnapshot,
    Drained,
    Effect,
    Fail,
    Forward,
    Persist,
    ReadFiles,
    Reply,
    StartFork,
    WantDistil,
    WantPassivation,
    WriteInsights,
)
from live_memory.workspace.records import Answer, EventKind, FileEvent, NotifyOutcome, Question
from live_memory.workspace.rereads import RereadCounters
from live_memory.workspace.state import Limits, WorkspaceState

__all__ = [
    "Account",
    "Answer",
    "CancelFork",
    "DeleteSnapshot",
    "Drained",
    "Effect",
    "EventKind",
    "Fail",
    "FileEvent",
    "Forward",
    "Limits",
    "NotifyOutcome",
    "Persist",
    "Question",
    "ReadFiles",
    "Reply",
    "Reread",
    "RereadCounters",
    "StartFork",
    "WantDistil",
    "WantPassivation",
    "WorkspaceCounters",
    "WorkspaceState",
    "WriteInsights",
]
