"""The actor layer: gateway, workspace, fork actors and their messages."""

from __future__ import annotations

from live_memory.actors.fork import ForkActor, ForkCancelled
from live_memory.actors.gateway import GatewayActor, SweepIdle
from live_memory.actors.message import (
    Answer,
    Ask,
    Cancel,
    Clear,
    Commit,
    Drain,
    FileEvent,
    GetStats,
    KeepWarmTick,
    ListWorkspaces,
    Notify,
    NotifyOutcome,
    Reset,
    Route,
)
from live_memory.actors.runtime import Actor, ActorRef, ActorSystem, Promise
from live_memory.actors.workspace import WorkspaceActor

__all__ = [
    "Actor",
    "ActorRef",
    "ActorSystem",
    "Answer",
    "Ask",
    "Cancel",
    "Clear",
    "Commit",
    "Drain",
    "FileEvent",
    "ForkActor",
    "ForkCancelled",
    "GatewayActor",
    "GetStats",
    "KeepWarmTick",
    "ListWorkspaces",
    "Notify",
    "NotifyOutcome",
    "Promise",
    "Reset",
    "Route",
    "SweepIdle",
    "WorkspaceActor",
]
