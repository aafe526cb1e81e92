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
- at LIVE_MEMORY_MAX_CONNECTIONS a new connection sheds, in this order: the longest-waiting
  connection with no request in progress (idle keep-alive, half-sent head, half-sent direct
  /notify body); else the oldest held request (a `GET /mcp` event stream or a body still
  arriving, gateway/held_requests), which ends cleanly; else, with every connection serving
  a question or the like, up to CONNECTION_HEADROOM more are served, and past that
  HEALTH_RESERVE more have their head read: `/health` is answered, anything else 503.

A request's body is due within the request timeout of the request's first byte: the
deadline goes to the app in the scope (`body.REQUEST_DEADLINE`, read by `body.read_body`,
also used in front of /mcp), and a `POST /notify` the protocol answers itself
(gateway/notify_direct) is held to it here.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from uvicorn.protocols.http.flow_control import FlowControl
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.protocols.utils import get_local_addr, get_remote_addr, is_ssl

from live_memory.config import constants as C
from live_memory.gateway.body import REQUEST_DEADLINE
from live_memory.gateway.held_requests import HeldRequests
from live_memory.gateway.notify_direct import DirectNotify
from live_memory.gateway.one_write import HeadWithBody

__all__ = ["limited_http_protocol"]

logger = logging.getLogger(__name__)


_NOTIFY_URL = b"/notify"
_HEALTH_URL = b"/health"
_OK_HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"


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
    direct: DirectNotify | None = None
    held: HeldRequests | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_bytes = 0
        self._in_head = True
        self._head_timer: asyncio.TimerHandle | None = None
        self._waiting_since = 0.0
        self._direct_body: bytearray | None = None
        """The body of a /notify this protocol answers itself, while it arrives."""
        self._answered = False
        """A direct /notify was answered while parsing the current chunk."""
        self._deadline = 0.0
        """When the current request (head and body) is due, from its first byte."""
        self._health_only = False
        """Admitted past the headroom: only /health is served on this connection."""
        self._silent = True
        """Nothing received yet: shed last, as a client's request may be on its way (a
        burst of accepted connections is set up before any of them is read)."""

    # --- state ---------------------------------------------------------------------------
    def _busy(self) -> bool:
        """A parsed request is being served on this connection (shed only through `held`);
        a direct /notify waiting for its body is not yet."""
        if self._direct_body is not None:
            return False
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

    def _addresses(self) -> None:
        """The connection's two addresses, looked up when first needed: the scope of a
        request uvicorn serves, or an Origin to compare with this server's own. A hook's
        /notify needs neither, and the look-ups (a socket object, getsockname, getpeername)
        were a tenth of such a request's time on the event loop."""
        if self.server is None:
            self.server = get_local_addr(self.transport)
            self.client = get_remote_addr(self.transport)
        if self.scope is not None:
            self.scope["server"], self.scope["client"] = self.server, self.client

    # --- uvicorn protocol hooks ----------------------------------------------------------
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        # uvicorn's own connection_made (0.54) but the address look-ups (`_addresses`) and
        # its TRACE-level log line.
        self.connections.add(self)
        self.transport = transport
        self.flow = FlowControl(transport)
        self.scheme = "https" if is_ssl(transport) else "http"
        self._arm_head_timer()
        if len(self.connections) > self.max_connections:
            self._shed()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_head_timer()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        self._answered = False
        self._silent = False
        super().data_received(data)
        if self._answered:  # `data` held a request answered just now, not a new head
            return
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
        self._deadline = self.loop.time() + self.head_timeout_s
        self.scope.setdefault("extensions", {})[REQUEST_DEADLINE] = {"deadline": self._deadline}
        self._in_head = True
        self._head_bytes = 0
        if self._head_timer is None:
            self._arm_head_timer()

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._cancel_head_timer()
        if self._health_only and self.url.split(b"?", 1)[0] != _HEALTH_URL:
            self._refuse(503, "Service Unavailable", "the server is at its connection limit")
            return
        if self._take_direct():  # its body is due by the request's deadline
            self._head_timer = self.loop.call_at(self._deadline, self._head_timed_out)
            return
        self._addresses()
        self._serve_head()

    def _serve_head(self) -> None:
        """uvicorn's handling of a parsed head; the cycle it starts writes its response's
        head and body in one send (gateway/one_write)."""
        super().on_headers_complete()
        if self.cycle is not None and self.cycle.transport is self.transport:
            self.cycle.transport = HeadWithBody(self.transport, self.loop)  # type: ignore[assignment]

    def on_body(self, body: bytes) -> None:
        if self.transport.is_closing():  # refused or shed: the rest is not read
            return
        if self._direct_body is not None:
            self._direct_body += body  # at most the declared length, within the body cap
            return
        super().on_body(body)

    def on_message_complete(self) -> None:
        if self.transport.is_closing():
            return
        if self._direct_body is None:
            super().on_message_complete()
            return
        body, self._direct_body = bytes(self._direct_body), None
        self._cancel_head_timer()
        payload = self.direct.answer(body) if self.direct is not None else None
        if payload is None:  # replay: uvicorn serves it as if the request arrived just now
            self._addresses()
            self._serve_head()
            super().on_body(body)
            super().on_message_complete()
            return
        keep_alive = self.parser.should_keep_alive()
        head = [_OK_HEAD, b"content-length: %d\r\n" % len(payload)]
        head.extend(b"%s: %s\r\n" % pair for pair in self.server_state.default_headers)
        if not keep_alive:
            head.append(b"connection: close\r\n")
        head.extend((b"\r\n", payload))
        self.transport.write(b"".join(head))  # head and body in one send
        self._answered = True
        if not keep_alive:
            self.transport.close()
        self.on_response_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and not self.pipeline:
            self._in_head = True
            self._head_bytes = 0
            self._arm_head_timer()  # the next request's head is due like the first one's

    def _take_direct(self) -> bool:
        """A POST /notify the protocol answers itself (see gateway/notify_direct)."""
        direct = self.direct
        if direct is None or self.url != _NOTIFY_URL or self.expect_100_continue:
            return False
        if (self.cycle is not None and not self.cycle.response_complete) or self.pipeline:
            return False  # behind a request still being served: keep the order
        if self.parser.get_http_version() != "1.1" or self.parser.should_upgrade():
            return False
        if any(name == b"origin" for name, _ in self.headers):
            self._addresses()  # the Guard compares an Origin with this server's own
        length = direct.body_length(
            self.parser.get_method(), self.headers, self.scheme or "http", self.server
        )
        if length is None:
            return False
        self._direct_body = bytearray()
        return True

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self._direct_body is not None:
            self._direct_body = None
            self._refuse(
                408,
                "Request Timeout",
                f"the request did not arrive within LIVE_MEMORY_REQUEST_TIMEOUT_S "
                f"({self.head_timeout_s:g} s)",
            )
            return
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
        progress (a silent one last), else end the oldest held request; with nothing to
        shed, serve this newcomer within the headroom, then /health only within the reserve,
        and past it close it."""
        idle = [
            c
            for c in self.connections
            if isinstance(c, _LimitedHttpToolsProtocol) and c is not self and not c._busy()
        ]

        def age(c: _LimitedHttpToolsProtocol) -> float:
            return c._waiting_since

        victim = min((c for c in idle if not c._silent), key=age, default=None)
        if victim is None and self.held is not None and self.held.shed_oldest():
            return
        victim = victim or min(idle, key=age, default=None)
        if victim is not None:
            victim._cancel_head_timer()
            victim.transport.close()
            return
        over = len(self.connections) - self.max_connections - C.CONNECTION_HEADROOM
        if over > C.HEALTH_RESERVE:
            self.transport.close()
        elif over > 0:
            self._health_only = True


def limited_http_protocol(
    *,
    head_timeout_s: float,
    max_head_bytes: int = C.MAX_HEADER_BYTES,
    max_connections: int = C.MAX_CONNECTIONS,
    direct: DirectNotify | None = None,
    held: HeldRequests | None = None,
) -> type[HttpToolsProtocol]:
    """uvicorn's httptools protocol with the limits above (pass as `uvicorn.Config(http=...)`),
    answering `POST /notify` itself when `direct` is given, shedding `held` requests at the
    connection cap."""
    return type(
        "LimitedHttpToolsProtocol",
        (_LimitedHttpToolsProtocol,),
        {
            "head_timeout_s": head_timeout_s,
            "max_head_bytes": max_head_bytes,
            "max_connections": max_connections,
            "direct": direct,
            "held": held,
        },
    )
