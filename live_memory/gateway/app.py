"""The app factory: a Starlette gateway whose lifespan owns the actor system and MCP."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncIterator, Mapping
from concurrent.futures import Future

import orjson
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from sse_starlette.sse import AppStatus
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from live_memory.agent import build_services
from live_memory.config import Settings, load_settings
from live_memory.config import constants as C
from live_memory.errors import LiveMemoryError
from live_memory.gateway.body import read_body
from live_memory.gateway.config_route import build_config_route
from live_memory.gateway.error_map import error_payload
from live_memory.gateway.guard import Guard, GuardRules, allowed_hostnames
from live_memory.gateway.held_requests import HeldRequests, serve_stream
from live_memory.gateway.jsonrpc_check import jsonrpc_problem
from live_memory.gateway.mcp_reply import answer_watched, replay, reply_as_json
from live_memory.gateway.mcp_single_call import SingleCall, single_call
from live_memory.gateway.mcp_tools import build_mcp_server
from live_memory.gateway.notify_direct import DirectNotify
from live_memory.gateway.notify_fast_path import NotifyFastPath
from live_memory.gateway.routes import build_routes
from live_memory.gateway.service import LiveMemoryService
from live_memory.gateway.spool_replay import SpoolDrain
from live_memory.gateway.startup_heap import set_aside_startup_heap
from live_memory.gateway.ui.auth import DashboardAuth
from live_memory.gateway.ui.pages import build_ui_routes
from live_memory.server_identity import ServerIdentity

__all__ = ["create_app", "server_identity_of"]

logger = logging.getLogger(__name__)


def create_app(settings: Settings, *, environ: Mapping[str, str] | None = None) -> Starlette:
    """Build a fresh app (actors and MCP session manager start in its lifespan).

    `environ` is what `POST /reload` re-reads (default: the process environment).
    """
    env = dict(os.environ if environ is None else environ)

    async def reload(request: Request) -> dict[str, object]:
        current: LiveMemoryService = request.app.state.service
        # Only a `--config` file is passed on; the data dir's config.json is optional.
        default_file = current.settings.data_dir / C.CONFIG_FILE_NAME
        explicit = current.settings.config_file
        fresh = await asyncio.to_thread(
            load_settings,
            env,
            config_file=None if explicit == default_file else explicit,
            overrides={
                "host": current.settings.host,
                "port": current.settings.port,
                "data_dir": current.settings.data_dir,
            },
        )
        services = await asyncio.to_thread(build_services, fresh, current.stores)
        old = current.services
        current.reconfigure(fresh, services)
        if old.provider is not None and old.provider is not services.provider:
            # In-flight questions keep the old client until they finish; close it later.
            closing: Future[None] = current.system.io.submit(_close_later(old.provider))
            # Collects the close's error (a cancelled close, at shutdown, has none).
            closing.add_done_callback(lambda f: f.cancelled() or f.exception())
        logger.info("configuration reloaded: %s / %s", fresh.provider, fresh.model)
        return {"status": "reloaded", "provider": fresh.provider, "model": fresh.model}

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        # sse-starlette ends every SSE stream the moment uvicorn sees SIGTERM, which cut MCP
        # questions in flight ("SSE stream ended without a response"). Streams now end with
        # their answer: uvicorn waits for open connections (timeout_graceful_shutdown) before
        # this lifespan's shutdown, and the service drains what is still running.
        AppStatus.disable_automatic_graceful_drain()  # type: ignore[no-untyped-call]
        live = await asyncio.to_thread(LiveMemoryService, settings)
        app.state.service = live
        mcp_server = build_mcp_server(live)._lowlevel_server
        # Two transports for one server: SSE for what needs it, JSON for the rest (mcp_reply).
        manager = StreamableHTTPSessionManager(app=mcp_server, stateless=True, json_response=False)
        plain = StreamableHTTPSessionManager(app=mcp_server, stateless=True, json_response=True)
        app.state.mcp = StreamableHTTPASGIApp(manager)
        app.state.mcp_json = StreamableHTTPASGIApp(plain)
        app.state.spools = SpoolDrain(live)
        # Spooled hook bodies from while the server was down go in before new ones pile up.
        drain = asyncio.ensure_future(app.state.spools.at_start())
        try:
            async with (
                manager.run(),
                plain.run(),
                mcp_server.lifespan(mcp_server) as mcp_state,
            ):
                app.state.mcp_single = SingleCall(mcp_server, mcp_state, ask=live.ask)
                await asyncio.to_thread(set_aside_startup_heap)  # ready: what lives on
                try:
                    yield
                finally:
                    # Before the session manager cancels its tasks: questions still running
                    # (REST or MCP) finish and are persisted, within the drain time.
                    await live.drain_questions(C.MCP_DRAIN_S)
        finally:
            drain.cancel()
            await live.shutdown()

    dashboard = DashboardAuth(required=bool(settings.token))
    rules = GuardRules(
        hosts=allowed_hostnames(settings.host, settings.allowed_hosts),
        token=settings.token,
        dashboard=dashboard,
    )
    routes = [
        Route("/mcp", endpoint=_McpEndpoint()),
        *build_routes(reload),
        build_config_route(env),
        *build_ui_routes(dashboard, reload),
    ]
    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        middleware=[Middleware(Guard, rules=rules), Middleware(NotifyFastPath)],
    )
    # What `live-memory serve` hands its HTTP protocol: /notify answered without ASGI.
    app.state.direct_notify = DirectNotify(app.state, rules)
    # Answers GET /identity; whoever serves the app publishes it once the port is known.
    app.state.identity = ServerIdentity(settings.token)
    # Event streams and bodies still arriving, which its connection cap may shed.
    app.state.held_requests = HeldRequests()
    return app


def server_identity_of(app: object) -> ServerIdentity | None:
    """The identity `create_app` gave the app, for the server to publish (`serve`)."""
    identity = getattr(getattr(app, "state", None), "identity", None)
    return identity if isinstance(identity, ServerIdentity) else None


class _McpEndpoint:
    """An ASGI app (not a function, so Starlette passes scope/receive/send through) that
    forwards to the MCP transport the lifespan created.

    A POST body is read first under the same size and time limits as every REST route
    (the transport itself would wait forever for a half-sent body), then replayed, to the
    JSON-reply transport unless the POST needs a stream (mcp_reply).
    """

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        mcp = scope["app"].state.mcp
        if scope["method"] == "GET":  # an event stream for server messages: idle, sheddable
            await serve_stream(mcp, scope, receive, send)
            return
        if scope["method"] != "POST":
            await mcp(scope, receive, send)
            return
        service: LiveMemoryService = scope["app"].state.service
        try:
            body = await read_body(scope, receive, service.settings)
        except LiveMemoryError as exc:
            await _send_json(send, *error_payload(exc))
            return
        try:
            parsed = orjson.loads(body)
        except orjson.JSONDecodeError:
            parsed = None  # the SDK answers it (a parse error)
        problem = jsonrpc_problem(parsed)
        if problem is not None:
            await _send_json(send, 400, problem)
            return
        if _reply_as_json(scope, parsed, service):
            await answer_watched(_json_app(scope, parsed, len(body)), scope, body, receive, send)
            return
        await mcp(scope, replay(body, receive), send)  # then the client's own messages


def _json_app(scope: Scope, parsed: object, size: int) -> ASGIApp:
    state = scope["app"].state
    version = single_call(parsed, scope, size)
    if version is not None and isinstance(parsed, dict):
        single: ASGIApp | None = state.mcp_single.app_for(parsed, version)
        if single is not None:
            return single
    app: ASGIApp = state.mcp_json
    return app


def _reply_as_json(scope: Scope, parsed: object, service: LiveMemoryService) -> bool:
    accept = next((v for k, v in scope["headers"] if k == b"accept"), b"")
    answer_tokens = service.settings.max_answer_tokens  # the longest budget of any question
    backstop = service.services.budget(answer_tokens).waits_s + C.HARD_DEADLINE_MARGIN_S
    return reply_as_json(parsed, accept, backstop)


async def _send_json(send: Send, status: int, payload: object) -> None:
    data = orjson.dumps(payload)
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(data))]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})


async def _close_later(provider: object, delay_s: float = 600.0) -> None:
    try:
        await asyncio.sleep(delay_s)
    finally:  # also when the I/O loop's drain cancels this at shutdown: on uvloop an open
        close = getattr(provider, "aclose", None)  # pool makes closing the loop fail (EBUSY)
        if close is not None:
            await close()
