"""Failures of a provider call made over plain HTTP (no SDK), shaped like the SDKs' own.

The retry module classifies these exactly as it does the SDK exceptions: a status error
carries `status_code`, the decoded `body`, a `message` and the `response` (for retry-after);
every failure carries the `request`, so an error names the endpoint without credentials.
"""

from __future__ import annotations

import httpx2
import orjson

__all__ = ["HttpApiError", "HttpConnectionError", "HttpStatusError", "HttpTimeoutError"]


class HttpApiError(Exception):
    """Base of the failures below (what the retry loop catches)."""

    def __init__(self, message: str, request: httpx2.Request) -> None:
        super().__init__(message)
        self.message = message
        self.request = request


class HttpStatusError(HttpApiError):
    """The endpoint answered with a non-2xx status (or reported one inside a stream)."""

    def __init__(
        self, response: httpx2.Response, *, status: int | None = None, body: object = None
    ) -> None:
        self.response = response
        self.status_code = response.status_code if status is None else status
        if body is None:
            try:
                body = orjson.loads(response.content)
            except orjson.JSONDecodeError:
                body = response.text
        self.body: object = body
        super().__init__(f"Error code: {self.status_code}", response.request)


class HttpTimeoutError(HttpApiError):
    """No answer (or no connection) within the call's timeout."""


class HttpConnectionError(HttpApiError):
    """The connection failed (refused, reset, protocol error); the cause is chained."""
