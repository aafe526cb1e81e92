"""A fake OAuth token endpoint over real HTTP, for the subscription-token refresh.

    with FakeTokenEndpoint(expires_in=3600) as endpoint:
        source = OAuthTokenSource(claude_file, store, token_url=endpoint.url)
        assert source() == "fake-access-1"
        assert endpoint.requests[0]["grant_type"] == "refresh_token"

`POST /v1/oauth/token` takes the JSON refresh grant Claude Code sends and answers
`{"access_token": "fake-access-N", "refresh_token": "fake-refresh-N", "expires_in": ...}`.
Like the real one it insists on the client id, and it rotates refresh tokens: each one it
issued works once (`invalid_grant` after). Tokens it never issued are accepted unless
`accept_unknown_refresh=False`. `fail_next(status)` scripts errors; `reset()` forgets all.
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections import deque
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from live_memory.config import constants
from tests.support.background_server import ServedFake

__all__ = ["FakeTokenEndpoint"]

logger = logging.getLogger(__name__)

TOKEN_PATH = "/v1/oauth/token"


class FakeTokenEndpoint(ServedFake):
    """The fake token server; use as a context manager, or `start()` / `stop()`."""

    def __init__(
        self,
        *,
        expires_in: int = 3600,
        client_id: str = constants.CLAUDE_OAUTH_CLIENT_ID,
        accept_unknown_refresh: bool = True,
    ) -> None:
        self.expires_in = expires_in
        self._client_id = client_id
        self._accept_unknown = accept_unknown_refresh
        self._cond = threading.Condition()
        self._requests: list[dict[str, Any]] = []
        self._failures: deque[int] = deque()
        self._issued: set[str] = set()
        self._spent: set[str] = set()
        self._ids = itertools.count(1)
        app = Starlette(routes=[Route(TOKEN_PATH, self._token, methods=["POST"])])
        super().__init__(app, "fake token endpoint")

    @property
    def url(self) -> str:
        """The token URL (LIVE_MEMORY_OAUTH_TOKEN_URL)."""
        return f"{self._base_url}{TOKEN_PATH}"

    @property
    def requests(self) -> list[dict[str, Any]]:
        """The JSON bodies received, oldest first."""
        with self._cond:
            return list(self._requests)

    def reset(self) -> None:
        """Forget requests, scripted failures and issued tokens; numbering restarts at 1."""
        with self._cond:
            self._requests.clear()
            self._failures.clear()
            self._issued.clear()
            self._spent.clear()
            self._ids = itertools.count(1)

    def fail_next(self, *statuses: int) -> None:
        """Answer the next requests with these HTTP statuses (an OAuth error body)."""
        with self._cond:
            self._failures.extend(statuses)

    async def _token(self, request: Request) -> Response:
        try:
            body = orjson.loads(await request.body())
        except orjson.JSONDecodeError:
            body = None
        if not isinstance(body, dict):
            return _error(400, "invalid_request", "the body is not a JSON object")
        with self._cond:
            self._requests.append(body)
            self._cond.notify_all()
            failure = self._failures.popleft() if self._failures else None
            if failure is not None:
                return _error(failure, "server_error", "scripted failure")
            problem = self._problem(body)
            if problem is not None:
                return _error(400, *problem)
            self._spent.add(body["refresh_token"])
            n = next(self._ids)
            access, refresh = f"fake-access-{n}", f"fake-refresh-{n}"
            self._issued.add(refresh)
        answer = {
            "token_type": "Bearer",
            "access_token": access,
            "refresh_token": refresh,
            "expires_in": self.expires_in,
            "scope": "user:inference user:profile",
        }
        return Response(orjson.dumps(answer), 200, media_type="application/json")

    def _problem(self, body: dict[str, Any]) -> tuple[str, str] | None:
        if body.get("grant_type") != "refresh_token":
            return "unsupported_grant_type", "grant_type must be refresh_token"
        if body.get("client_id") != self._client_id:
            return "invalid_client", "unknown client_id"
        token = body.get("refresh_token")
        if not isinstance(token, str) or not token:
            return "invalid_request", "refresh_token is required"
        if token in self._spent or (not self._accept_unknown and token not in self._issued):
            return "invalid_grant", "refresh token is invalid or was already used"
        return None


def _error(status: int, error: str, description: str) -> Response:
    body = orjson.dumps({"error": error, "error_description": description})
    return Response(body, status, media_type="application/json")
