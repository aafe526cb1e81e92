"""The Ray backend (LIVE_MEMORY_BACKEND=ray): workspace actors as named, detached Ray actors.

Imported only when that backend is chosen (it needs the `ray` extra:
`pip install 'live-memory[ray]'`); the local backend never imports it, nor Ray.
See docs/SCALING.md for placement, failure modes and operations.
"""

from __future__ import annotations

from live_memory.ray_backend.answers import AnswerLog
from live_memory.ray_backend.cluster import connect, disconnect
from live_memory.ray_backend.durable import DurableWorkspaceActor, Flush
from live_memory.ray_backend.host import WorkspaceHost
from live_memory.ray_backend.placement import (
    actor_name,
    checkout_resource,
    choose_node,
    choose_resource,
)
from live_memory.ray_backend.router import RayRouter
from live_memory.ray_backend.wire import AskRequest, Outcome, PlainRequest, to_request

__all__ = [
    "AnswerLog",
    "AskRequest",
    "DurableWorkspaceActor",
    "Flush",
    "Outcome",
    "PlainRequest",
    "RayRouter",
    "WorkspaceHost",
    "actor_name",
    "checkout_resource",
    "choose_node",
    "choose_resource",
    "connect",
    "disconnect",
    "to_request",
]
