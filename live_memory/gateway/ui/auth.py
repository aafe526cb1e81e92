"""Who may use the dashboard: one-time login links, browser sessions and CSRF tokens.

With LIVE_MEMORY_TOKEN set, `live-memory dashboard` (which holds the token) asks the server
for a one-time link; opening it trades the link for a random session id in an HttpOnly,
SameSite=Strict cookie, and the browser is redirected to a clean /ui URL: the token never
appears in a URL and the link works once, for DASHBOARD_LOGIN_TTL_S.

CSRF: SameSite=Strict keeps the cookie off cross-site requests, but a "site" ignores ports,
so any other local web app on 127.0.0.1 is same-site. Every action therefore also needs an
Origin equal to this server's own origin (scheme, host and port) and a synchronizer token
(an HMAC of the session under a per-process secret) from a form only our own pages contain;
a page of another origin cannot read our pages (no CORS), so it cannot learn the token.
Without a configured token the same two checks apply, keyed to an anonymous session.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from live_memory.config import constants as C

__all__ = ["DashboardAuth", "cookie_value"]

_ANONYMOUS = "anonymous"


def cookie_value(header: str, name: str = C.DASHBOARD_SESSION_COOKIE) -> str | None:
    """The value of cookie `name` in a Cookie header, or None."""
    for part in header.split(";"):
        key, sep, value = part.strip().partition("=")
        if sep and key == name:
            return value.strip()
    return None


class DashboardAuth:
    """Links and sessions held in memory (bounded), so a restart logs every browser out."""

    def __init__(self, *, required: bool, clock: Callable[[], float] = time.monotonic) -> None:
        self.required = required
        """A token is configured: /ui needs a session (or the bearer token)."""
        self._clock = clock
        self._secret = secrets.token_bytes(32)
        self._lock = threading.Lock()
        self._links: OrderedDict[str, float] = OrderedDict()
        self._sessions: OrderedDict[str, float] = OrderedDict()

    def issue_link(self) -> str:
        """A fresh one-time login secret (for the URL `live-memory dashboard` prints)."""
        once = secrets.token_urlsafe(32)
        with self._lock:
            self._prune(self._links)
            self._links[once] = self._clock() + C.DASHBOARD_LOGIN_TTL_S
            while len(self._links) > C.DASHBOARD_MAX_LOGIN_LINKS:
                self._links.popitem(last=False)
        return once

    def redeem(self, once: str) -> str | None:
        """Trade a login link for a new session id; None when unknown, used or expired."""
        with self._lock:
            self._prune(self._links)
            if self._links.pop(once, None) is None:
                return None
            session = secrets.token_urlsafe(32)
            self._prune(self._sessions)
            self._sessions[session] = self._clock() + C.DASHBOARD_SESSION_TTL_S
            while len(self._sessions) > C.DASHBOARD_MAX_SESSIONS:
                self._sessions.popitem(last=False)
            return session

    def session_valid(self, session: str | None) -> bool:
        if not session:
            return False
        with self._lock:
            expires = self._sessions.get(session)
            return expires is not None and expires > self._clock()

    def csrf_token(self, session: str | None) -> str:
        """The synchronizer token our pages embed in their action forms."""
        key = session if self.required and session else _ANONYMOUS
        return hmac.new(self._secret, key.encode(), hashlib.sha256).hexdigest()

    def csrf_ok(self, session: str | None, given: str) -> bool:
        return hmac.compare_digest(self.csrf_token(session).encode(), given.encode())

    def _prune(self, table: OrderedDict[str, float]) -> None:
        now = self._clock()
        for key in [k for k, expires in table.items() if expires <= now]:
            del table[key]
