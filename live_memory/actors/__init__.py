"""The actor layer: gateway and workspace actors, forks and their messages."""

from __future__ import annotations

from live_memory.actors.fork import Fork, ForkCancelled
from live_memory.actors.gateway import AttachWatcher, GatewayActor, SweepIdle
from live_memory.actors.inspection import InspectWorkspace, snapshot_detail
from live_memory.actors.io_loop import IoLoop
from live_memory.actors.keep_warm import KeepWarmActor, KeepWarmConfig, keep_warm_config
from live_memory.actors.message import (
    Answer,
    Ask,
    Clear,
    ClearAll,
    ClearAllStarted,
    Commit,
    DescribeMemory,
    Drain,
    DrainTranscripts,
    EventKind,
    ExportLedger,
    FileEvent,
    ForkFailed,
    GetStats,
    ImportFacts,
    KeepWarmTick,
    ListWorkspaces,
    Notify,
    NotifyOutcome,
    Reset,
    Route,
    UpdateServices,
)
from live_memory.actors.runtime import (
    Actor,
    ActorDeadError,
    ActorRef,
    ActorSystem,
    Promise,
    resolve,
)
from live_memory.actors.watchdog import WatchdogActor
from live_memory.actors.workspace import WorkspaceActor

__all__ = [
    "Actor",
    "ActorDeadError",
    "ActorRef",
    "ActorSystem",
    "Answer",
    "Ask",
    "AttachWatcher",
    "Clear",
    "ClearAll",
    "ClearAllStarted",
    "Commit",
    "DescribeMemory",
    "Drain",
    "DrainTranscripts",
    "EventKind",
    "ExportLedger",
    "FileEvent",
    "Fork",
    "ForkCancelled",
    "ForkFailed",
    "GatewayActor",
    "GetStats",
    "ImportFacts",
    "InspectWorkspace",
    "IoLoop",
    "KeepWarmActor",
    "KeepWarmConfig",
    "KeepWarmTick",
    "ListWorkspaces",
    "Notify",
    "NotifyOutcome",
    "Promise",
    "Reset",
    "Route",
    "SweepIdle",
    "UpdateServices",
    "WatchdogActor",
    "WorkspaceActor",
    "keep_warm_config",
    "resolve",
    "snapshot_detail",
]
