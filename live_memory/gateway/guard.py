"""Who may talk to the server: Host/Origin checks (DNS rebinding) and bearer-token auth.

Pure ASGI middleware so every route — MCP included — passes through it cheaply.
"""

from __future__ import annotations

import hmac
import re
from collections.abc import Iterable
from urllib.parse import urlsplit

import orjson
from starlette.types import ASGIApp, Receive, Scope, Send

from live_memory.config import constants as C

__all__ = ["Guard", "allowed_hostnames"]

_OPEN_PATHS = frozenset({"/health"})
# A bare host name or bracketed IPv6 literal, optional port: nothing a URL parser could
# read two ways (`evil.example\@127.0.0.1`).
_HOST_SHAPE = re.compile(r"(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?")


def allowed_hostnames(configured_host: str) -> frozenset[str]:
    names = {h.strip("[]").lower() for h in C.LOOPBACK_HOSTS}
    if configured_host not in ("0.0.0.0", "::", ""):
        names.add(configured_host.strip("[]").lower())
    return frozenset(names)


def _hostname(value: str) -> str:
    try:
        return (urlsplit(f"//{value}").hostname or "").lower()
    except ValueError:
        return ""


class Guard:
    def __init__(self, app: ASGIApp, *, hosts: Iterable[str], token: str | None) -> None:
        self.app = app
        self.hosts = frozenset(hosts)
        self.token = f"Bearer {token}".encode() if token else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers: dict[bytes, list[bytes]] = {}
        for name, value in scope["headers"]:
            headers.setdefault(name, []).append(value)
        hosts, origins = headers.get(b"host", []), headers.get(b"origin", [])
        if len(hosts) > 1 or len(origins) > 1:
            await _refuse(send, 400, "more than one Host or Origin header")
            return
        host = hosts[0].decode("latin-1") if hosts else ""
        if not _HOST_SHAPE.fullmatch(host) or _hostname(host) not in self.hosts:
            await _refuse(send, 421, f"Host {host!r} is not allowed (DNS-rebinding protection)")
            return
        if origins:
            name = (urlsplit(origins[0].decode("latin-1")).hostname or "").lower()
            if name not in self.hosts:
                await _refuse(send, 403, "Origin is not allowed (DNS-rebinding protection)")
                return
        if self.token is not None and scope["path"] not in _OPEN_PATHS:
            given = b"".join(headers.get(b"authorization", [])[:1])
            if not hmac.compare_digest(given, self.token):
                await _refuse(send, 401, "missing or wrong bearer token (LIVE_MEMORY_TOKEN)")
                return
        await self.app(scope, receive, send)


async def _refuse(send: Send, status: int, message: str) -> None:
    body = orjson.dumps({"error": message})
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
