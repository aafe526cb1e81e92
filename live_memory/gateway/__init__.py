"""The HTTP edge: Starlette app, MCP tools, REST routes, guards and error mapping."""

from __future__ import annotations

from live_memory.gateway.app import create_app, server_identity_of
from live_memory.gateway.held_requests import held_requests_of
from live_memory.gateway.http_limits import limited_http_protocol
from live_memory.gateway.notify_direct import DirectNotify, direct_notify_of
from live_memory.gateway.service import LiveMemoryService

__all__ = [
    "DirectNotify",
    "LiveMemoryService",
    "create_app",
    "direct_notify_of",
    "held_requests_of",
    "limited_http_protocol",
    "server_identity_of",
]
