"""Connection-level limits uvicorn's HTTP/1.1 protocol does not have on its own.

uvicorn (httptools) buffers a request head without bound (a 256 MiB unterminated header line
was held whole), gives a connection that never sends its request forever, and with
`limit_concurrency` answers 503 to everyone once idle connections fill the table, `/health`
included. This protocol, a thin subclass of uvicorn's, adds three rules:

- the request head (request line and headers) is at most MAX_HEADER_BYTES: beyond it the
  client gets 431 and the connection is closed, so held bytes per connection stay bounded;
- the head must arrive within the request timeout (LIVE_MEMORY_REQUEST_TIMEOUT_S), counted
  from the connection's first byte or from the previous response: a connection that sends
  nothing, or half a head, is answered 408 and closed;
- at MAX_CONNECTIONS a new connection sheds the longest-waiting connection that has no
  request in progress (idle keep-alive or half-sent head) instead of refusing newcomers;
  only when every connection is serving a parsed request (up to MAX_CONNECTIONS plus
  CONNECTION_HEADROOM) is the newcomer closed. Parsed requests are never shed.

Body deadlines stay with the routes (`body.read_body`, also used in front of /mcp).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from live_memory.config import constants as C

__all__ = ["limited_http_protocol"]

logger = logging.getLogger(__name__)


def _reply(status: int, reason: str, message: str) -> bytes:
    body = b'{"error": "%s"}' % message.encode("ascii")
    return b"".join(
        (
            b"HTTP/1.1 %d %s\r\n" % (status, reason.encode("ascii")),
            b"content-type: application/json\r\n",
            b"content-length: %d\r\n" % len(body),
            b"connection: close\r\n\r\n",
            body,
        )
    )


class _LimitedHttpToolsProtocol(HttpToolsProtocol):
    head_timeout_s: float = C.REQUEST_BODY_TIMEOUT_S
    max_head_bytes: int = C.MAX_HEADER_BYTES
    max_connections: int = C.MAX_CONNECTIONS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_bytes = 0
        self._in_head = True
        self._head_timer: asyncio.TimerHandle | None = None
        self._waiting_since = 0.0

    # --- state ---------------------------------------------------------------------------
    def _busy(self) -> bool:
        """A parsed request is being served on this connection (never shed)."""
        return self.cycle is not None and not self.cycle.response_complete

    def _arm_head_timer(self) -> None:
        self._cancel_head_timer()
        self._waiting_since = self.loop.time()
        self._head_timer = self.loop.call_later(self.head_timeout_s, self._head_timed_out)

    def _cancel_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _refuse(self, status: int, reason: str, message: str) -> None:
        if not self.transport.is_closing():
            self.transport.write(_reply(status, reason, message))
            self.transport.close()

    # --- uvicorn protocol hooks ----------------------------------------------------------
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_head_timer()
        if len(self.connections) > self.max_connections:
            self._shed()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_head_timer()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._in_head and not self.transport.is_closing():
            self._head_bytes += len(data)
            if self._head_bytes > self.max_head_bytes:
                logger.warning("refused a request head over %d bytes", self.max_head_bytes)
                self._refuse(
                    431,
                    "Request Header Fields Too Large",
                    f"the request line and headers exceed {self.max_head_bytes} bytes",
                )

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._in_head = True
        self._head_bytes = 0
        if self._head_timer is None:
            self._arm_head_timer()

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._cancel_head_timer()
        super().on_headers_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and not self.pipeline:
            self._in_head = True
            self._head_bytes = 0
            self._arm_head_timer()  # the next request's head is due like the first one's

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self._busy():
            return
        if self._head_bytes == 0 and self.cycle is not None:
            if not self.transport.is_closing():  # an idle keep-alive connection: just close
                self.transport.close()
            return
        self._refuse(
            408,
            "Request Timeout",
            f"the request did not arrive within LIVE_MEMORY_REQUEST_TIMEOUT_S "
            f"({self.head_timeout_s:g} s)",
        )

    def _shed(self) -> None:
        """Over the connection cap: close the longest-waiting connection without a request in
        progress; if every other connection is serving one, close this newcomer only past
        the headroom."""
        idle = [
            c
            for c in self.connections
            if isinstance(c, _LimitedHttpToolsProtocol) and c is not self and not c._busy()
        ]
        if idle:
            oldest = min(idle, key=lambda c: c._waiting_since)
            oldest._cancel_head_timer()
            oldest.transport.close()
        elif len(self.connections) > self.max_connections + C.CONNECTION_HEADROOM:
            self.transport.close()


def limited_http_protocol(
    *, head_timeout_s: float, max_head_bytes: int = C.MAX_HEADER_BYTES
) -> type[HttpToolsProtocol]:
    """uvicorn's httptools protocol with the limits above (pass as `uvicorn.Config(http=...)`)."""
    return type(
        "LimitedHttpToolsProtocol",
        (_LimitedHttpToolsProtocol,),
        {"head_timeout_s": head_timeout_s, "max_head_bytes": max_head_bytes},
    )
