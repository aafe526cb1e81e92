"""A plain `tools/call` POST answered through the SDK's single-exchange driver.

The stateless streamable-HTTP transport builds, for every POST, a transport object, memory
streams, a message router, a server task in the session manager's task group and a JSON-RPC
dispatcher, only to carry one request to `ServerRunner` and its answer back. A `tools/call`
answered as JSON needs none of that: `serve_one` (the SDK's own driver for one exchange, which
its 2026-era HTTP entry uses) runs the same runner, so the same validation, middleware, tool
call and result serialisation, and this module writes the answer as the transport would have
(`JSONRPCResponse` / `JSONRPCError` as JSON, HTTP 200, the dispatcher's error mapping). That
took about a third of the event loop's CPU per question.

A plain `ask_live_memory` call skips the runner too: the service answers it directly and the
result is shaped with the SDK's own types (mcp_direct_ask, which says when).

Only a request the transport would take as it is comes here (`single_call`): one JSON-RPC
request object, method `tools/call`, no `_meta` at all (progress tokens, trace context and
anything else in it go the SDK's full way), a handshake-era protocol version header, a body
within the SDK's own size limit. Everything else, and every other method, goes to the SDK's
transports unchanged.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
from mcp.server.connection import Connection
from mcp.server.lowlevel.server import Server
from mcp.server.runner import serve_one
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from mcp.shared.exceptions import NoBackChannelError
from mcp.shared.jsonrpc_dispatcher import handler_exception_to_error_data
from mcp.shared.message import MessageMetadata, ServerMessageMetadata
from mcp.shared.transport_context import TransportContext
from mcp.types import ErrorData, JSONRPCError, JSONRPCRequest, JSONRPCResponse, RequestId
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from live_memory.gateway.mcp_direct_ask import ask_call, ask_result
from live_memory.workspace import Answer

__all__ = ["SingleCall", "single_call"]

logger = logging.getLogger(__name__)

_VERSION_HEADER = b"mcp-protocol-version"
_KEYS = frozenset({"jsonrpc", "id", "method", "params"})


def single_call(parsed: object, scope: Scope, body_size: int) -> str | None:
    """The protocol version to serve a plain `tools/call` with, or None (the SDK's way)."""
    if not isinstance(parsed, dict) or parsed.get("method") != "tools/call":
        return None
    params = parsed.get("params")
    if not parsed.keys() <= _KEYS or not isinstance(params, dict) or "_meta" in params:
        return None
    if body_size > DEFAULT_MAX_REQUEST_BODY_SIZE:
        return None  # the SDK answers 413
    versions = [v for k, v in scope["headers"] if k == _VERSION_HEADER]
    if len(versions) != 1:
        return None
    version = versions[0].decode("latin-1")
    return version if version in HANDSHAKE_PROTOCOL_VERSIONS else None


@dataclass(slots=True)
class _Exchange:
    """The dispatch context of one request with no back channel (a JSON answer carries only
    the response: the stateless transport drops request-scoped notifications as well)."""

    transport: TransportContext
    request_id: RequestId
    message_metadata: MessageMetadata
    cancel_requested: anyio.Event = field(default_factory=anyio.Event)
    progress_token: None = None
    can_send_request: bool = False

    async def send_raw_request(
        self, method: str, params: Mapping[str, Any] | None, opts: object = None
    ) -> dict[str, Any]:
        raise NoBackChannelError(method)

    async def notify(
        self, method: str, params: Mapping[str, Any] | None, opts: object = None
    ) -> None:
        return None

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        return None


class SingleCall:
    """Answers plain `tools/call` requests (see the module doc); a plain question, when
    `ask` is given, without the SDK's runner (mcp_direct_ask)."""

    def __init__(
        self,
        server: Server[Any],
        lifespan_state: Any,
        ask: Callable[[object, object, object], Awaitable[Answer]] | None = None,
    ) -> None:
        self.server = server
        self.lifespan_state = lifespan_state
        self.ask = ask

    def app_for(self, parsed: dict[str, Any], version: str) -> ASGIApp | None:
        """The ASGI app answering this request, or None when it is not a valid JSON-RPC
        request (the SDK then answers it in its own words)."""
        try:
            request = JSONRPCRequest.model_validate(parsed, by_name=False)
        except ValueError:
            return None
        ask, call = self.ask, ask_call(request.params)
        if ask is not None and call is not None and "tools/call" not in self.server.cache_hints:

            async def answer_directly(scope: Scope, receive: Receive, send: Send) -> None:
                result = await ask_result(ask, call, version)
                message = JSONRPCResponse(jsonrpc="2.0", id=request.id, result=result)
                await _respond(message, scope, receive, send)

            return answer_directly

        async def answer(scope: Scope, receive: Receive, send: Send) -> None:
            message = await self._exchange(request, version, Request(scope, receive))
            await _respond(message, scope, receive, send)

        return answer

    async def _exchange(
        self, request: JSONRPCRequest, version: str, http_request: Request
    ) -> JSONRPCResponse | JSONRPCError:
        exchange = _Exchange(
            TransportContext(kind="streamable-http", can_send_request=False),
            request.id,
            ServerMessageMetadata(request_context=http_request, can_send_request=False),
        )
        connection = Connection.from_envelope(version, None, None)
        try:
            result = await serve_one(
                self.server,
                exchange,
                request.method,
                request.params,
                connection=connection,
                lifespan_state=self.lifespan_state,
            )
        except Exception as exc:  # the dispatcher's exception-to-wire boundary, as it is
            error = handler_exception_to_error_data(exc)
            if error is None:
                logger.exception("handler for %r raised", request.method)
                error = ErrorData(code=0, message=str(exc))
            return JSONRPCError(jsonrpc="2.0", id=request.id, error=error)
        return JSONRPCResponse(jsonrpc="2.0", id=request.id, result=result)


async def _respond(
    message: JSONRPCResponse | JSONRPCError, scope: Scope, receive: Receive, send: Send
) -> None:
    data = message.model_dump_json(by_alias=True, exclude_unset=True)
    await Response(data, media_type="application/json")(scope, receive, send)
