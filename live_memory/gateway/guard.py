"""Who may talk to the server: Host/Origin checks (DNS rebinding), browser-request refusal
and bearer-token auth.

Pure ASGI middleware so every route — MCP included — passes through it cheaply. The threat it
answers is a web page in the user's browser (any local dev server, any site): such a page can
send "simple" requests (`text/plain` bodies, no preflight) to loopback. So, in this order:

1. Host must name this machine (DNS rebinding: `evil.example` resolving to 127.0.0.1).
2. Origin, when present, must be exactly this server (scheme, host, port): another localhost
   port is another origin.
3. `Sec-Fetch-Site: cross-site` / `same-site` (browsers set it, other clients never do) is
   refused: only same-origin browser requests pass.
4. The bearer token when one is configured.
5. Every POST must declare `Content-Type: application/json`, which a browser cannot send
   cross-origin without a CORS preflight that this server never grants, unless it carries
   this server's own exact Origin (a form on a page the server serves itself; the
   dashboard's forms also carry a CSRF token, see gateway/ui/auth.py).
With a token, /ui pages also accept the dashboard's session cookie (see gateway/ui/auth.py).
"""

from __future__ import annotations

import hmac
import re
from collections.abc import Iterable
from urllib.parse import urlsplit

import orjson
from starlette.types import ASGIApp, Receive, Scope, Send

from live_memory.config import constants as C
from live_memory.gateway.ui.auth import DashboardAuth, cookie_value
from live_memory.server_identity import IDENTITY_PATH

__all__ = [
    "HOST_SHAPE",
    "Guard",
    "GuardRules",
    "allowed_hostnames",
    "host_name",
    "is_json_media_type",
]

_OPEN_PATHS = frozenset({"/health", IDENTITY_PATH, "/ui/login"})
"""/ui/login checks its own one-time link; /identity is how a client checks the server before
it sends the token (live_memory/server_identity.py)."""
# A bare host name or bracketed IPv6 literal, optional port: nothing a URL parser could
# read two ways (`evil.example\@127.0.0.1`).
HOST_SHAPE = re.compile(r"(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?")
# `same-origin` (a page served by this server) and `none` (typed in the address bar) pass.
_REFUSED_FETCH_SITES = frozenset({b"cross-site", b"same-site"})
_DEFAULT_PORTS = {"http": 80, "https": 443}


def allowed_hostnames(configured_host: str, extra: Iterable[str] = ()) -> frozenset[str]:
    """Loopback, the bound host (unless every interface) and LIVE_MEMORY_ALLOWED_HOSTS."""
    names = {h.strip("[]").lower() for h in C.LOOPBACK_HOSTS} | set(extra)
    if configured_host not in ("0.0.0.0", "::", ""):
        names.add(configured_host.strip("[]").lower())
    return frozenset(names)


def is_json_media_type(value: bytes) -> bool:
    """True for `application/json`, parameters (`; charset=utf-8`) allowed."""
    media_type = value.split(b";", 1)[0].strip().lower()
    return media_type == b"application/json"


def host_name(shape: re.Match[str]) -> str:
    """The lowercased host name of a Host header that matched HOST_SHAPE, as urlsplit reads
    it. A plain name is split off its port here (urlsplit cost more than the rest of the
    checks on every hook request); a bracketed literal goes through urlsplit's IPv6 check."""
    name = shape.group(1)
    if not name.startswith("["):
        return name.lower()
    try:
        return (urlsplit(f"//{shape.group(0)}").hostname or "").lower()
    except ValueError:
        return ""


class GuardRules:
    """The checks above over a request head, pure: the Guard middleware and the direct
    /notify path of gateway/http_limits both ask `refusal`, so they cannot disagree."""

    def __init__(
        self, *, hosts: Iterable[str], token: str | None, dashboard: DashboardAuth | None = None
    ) -> None:
        self.hosts = frozenset(hosts)
        self.token = f"Bearer {token}".encode() if token else None
        self.dashboard = dashboard

    def _same_origin(
        self, origin: str, scheme: str, host: re.Match[str], server: tuple[str, int | None] | None
    ) -> bool:
        """Origin names this server: its scheme, an allowed host name, and the port the server
        listens on or the port of the request's own (allowed) Host header. The latter is the
        port the browser used: behind a mapped port (`docker -p 8000:7711`) the page and its
        requests both say 8000. A page of any other origin (another local port) matches neither."""
        try:
            parts = urlsplit(origin)
            port = parts.port
        except ValueError:
            return False
        if parts.scheme != scheme or (parts.hostname or "").lower() not in self.hosts:
            return False
        if parts.path not in ("", "/") or parts.query or parts.username is not None:
            return False
        default = _DEFAULT_PORTS.get(scheme)
        sent_to = int(host.group(2)[1:]) if host.group(2) else default
        return (port or default) in (sent_to, server[1] if server else None)

    def refusal(
        self,
        method: str,
        path: str,
        raw_headers: Iterable[tuple[bytes, bytes]],
        scheme: str = "http",
        server: tuple[str, int | None] | None = None,
    ) -> tuple[int, str] | None:
        """(status, message) when the request is refused, None when it may pass."""
        headers: dict[bytes, list[bytes]] = {}
        for name, value in raw_headers:
            headers.setdefault(name, []).append(value)
        hosts, origins = headers.get(b"host", []), headers.get(b"origin", [])
        if len(hosts) > 1 or len(origins) > 1:
            return 400, "more than one Host or Origin header"
        host = hosts[0].decode("latin-1") if hosts else ""
        shape = HOST_SHAPE.fullmatch(host)
        if shape is None or host_name(shape) not in self.hosts:
            return 421, (
                f"Host {host!r} is not allowed (DNS-rebinding protection); "
                "add its name to LIVE_MEMORY_ALLOWED_HOSTS to reach the server by it"
            )
        own_page = bool(origins) and self._same_origin(
            origins[0].decode("latin-1"), scheme, shape, server
        )
        if origins and not own_page:
            return 403, "Origin is not allowed: only this server's own origin may call it"
        if any(
            site.strip().lower() in _REFUSED_FETCH_SITES
            for site in headers.get(b"sec-fetch-site", [])
        ):
            return 403, "cross-site browser requests are refused (Sec-Fetch-Site)"
        if self.token is not None and path not in _OPEN_PATHS:
            given = b"".join(headers.get(b"authorization", [])[:1])
            if not hmac.compare_digest(given, self.token):
                if not _is_dashboard(path):
                    return 401, "missing or wrong bearer token (LIVE_MEMORY_TOKEN)"
                cookie = b"; ".join(headers.get(b"cookie", [])).decode("latin-1")
                if self.dashboard is None or not self.dashboard.session_valid(cookie_value(cookie)):
                    return (
                        401,
                        "not logged in (LIVE_MEMORY_TOKEN is set): "
                        "run `live-memory dashboard` for a login link",
                    )
        # A form on one of this server's own pages (the dashboard) proves where it comes from
        # with its exact Origin, which no other page can send; everyone else speaks JSON.
        if method == "POST" and not own_page:
            types = headers.get(b"content-type", [])
            if len(types) != 1 or not is_json_media_type(types[0]):
                return 415, "POST bodies must be sent as Content-Type: application/json"
        return None


class Guard:
    """The rules as pure ASGI middleware, in front of every route."""

    def __init__(self, app: ASGIApp, *, rules: GuardRules) -> None:
        self.app = app
        self.rules = rules

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            refused = self.rules.refusal(
                scope["method"],
                scope["path"],
                scope["headers"],
                scope.get("scheme", "http"),
                scope.get("server"),
            )
            if refused is not None:
                await _refuse(send, *refused)
                return
        await self.app(scope, receive, send)


def _is_dashboard(path: str) -> bool:
    return path == "/ui" or path.startswith("/ui/")


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
