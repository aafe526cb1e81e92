"""REST routes: /health, /identity, /stats, /reset, /clear, /reload, /actors, /api/ask.

`POST /notify` is served by `notify_fast_path`.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from live_memory.errors import ClientGone, InputError, LiveMemoryError
from live_memory.gateway.body import decode_json, read_body
from live_memory.gateway.error_map import error_response
from live_memory.gateway.json_response import ORJSONResponse
from live_memory.gateway.service import LiveMemoryService
from live_memory.gateway.stats_text import render_stats_text
from live_memory.server_identity import CHALLENGE_HEADER, IDENTITY_PATH, ServerIdentity

__all__ = ["build_routes"]

T = TypeVar("T")
Handler = Callable[[Request], Awaitable[Response]]


async def _body(request: Request) -> Any:
    return decode_json(await read_body(request.scope, request.receive, _service(request).settings))


async def _unless_disconnected(request: Request, work: Coroutine[Any, Any, T]) -> T:
    """Run `work`, cancelling it if the client goes away: its fork and model calls stop
    instead of running on for nobody."""
    task = asyncio.ensure_future(work)

    async def watch() -> None:
        while (await request.receive())["type"] != "http.disconnect":
            pass

    watcher = asyncio.ensure_future(watch())
    try:
        await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
        if not task.done():
            task.cancel()
            raise ClientGone("the client disconnected; its question was cancelled")
        return task.result()
    finally:
        watcher.cancel()
        if not task.done():
            task.cancel()


def _object(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise InputError("body must be a JSON object")
    return body


def _guarded(handler: Handler) -> Handler:
    async def run(request: Request) -> Response:
        try:
            return await handler(request)
        except (LiveMemoryError, TimeoutError) as exc:
            return error_response(exc)

    return run


def _service(request: Request) -> LiveMemoryService:
    service: LiveMemoryService = request.app.state.service
    return service


def build_routes(reload: Callable[[Request], Awaitable[dict[str, object]]]) -> list[Route]:
    """The REST routes; the service is the one the app's lifespan put on `app.state`."""

    async def health(request: Request) -> Response:
        return ORJSONResponse(await _service(request).health())

    async def identity(request: Request) -> Response:
        # A client's first request on a connection, before it sends any token or content.
        server_identity: ServerIdentity = request.app.state.identity
        server, client = request.scope.get("server"), request.client
        nonce = request.headers.get(CHALLENGE_HEADER, "")
        answer = None
        if server is not None and client is not None:
            answer = server_identity.answer(nonce, (client.host, client.port), server)
        if answer is None:
            raise InputError(f"{CHALLENGE_HEADER} must be 32 lowercase hex digits, over TCP")
        return ORJSONResponse(answer)

    async def stats(request: Request) -> Response:
        cwd = request.query_params.get("cwd")
        service = _service(request)
        by_day = request.query_params.get("by_day") in ("1", "true")
        if not cwd and by_day:  # usage per day of every workspace
            rows = await service.usage_by_day(None)
            return ORJSONResponse({"workspace": None, "by_day": rows})
        if not cwd:
            raise InputError("query parameter cwd (absolute workspace path) is required")
        body = await service.stats(cwd)
        if by_day:
            body["by_day"] = await service.usage_by_day(str(body["workspace"]))
        if request.query_params.get("format") == "text":
            return PlainTextResponse(render_stats_text(body))
        return ORJSONResponse(body)

    async def reset(request: Request) -> Response:
        return ORJSONResponse(
            await _service(request).reset(_object(await _body(request)).get("cwd"))
        )

    async def clear(request: Request) -> Response:
        body = _object(await _body(request))
        every = body.get("all", False)
        if not isinstance(every, bool):
            raise InputError('"all" must be true or false')
        if every and body.get("cwd") is not None:
            raise InputError('give either "cwd" (one workspace) or "all": true, not both')
        service = _service(request)
        if every:
            return ORJSONResponse(await service.clear_all())
        return ORJSONResponse(await service.clear(body.get("cwd")))

    async def reload_config(request: Request) -> Response:
        return ORJSONResponse(await reload(request))

    async def actors(request: Request) -> Response:
        return ORJSONResponse(await _service(request).cluster_actors())

    async def api_ask(request: Request) -> Response:
        body = _object(await _body(request))
        answer = await _unless_disconnected(
            request,
            _service(request).ask(
                body.get("question"), body.get("cwd"), body.get("max_answer_tokens")
            ),
        )
        return ORJSONResponse(
            {
                "answer": answer.answer,
                "text": answer.text,
                "model": answer.model,
                "latency_s": round(answer.latency_s, 3),
                "tokens": {
                    "input": answer.usage.input_tokens,
                    "output": answer.usage.output_tokens,
                    "cache_read": answer.usage.cache_read_tokens,
                    "cache_write": answer.usage.cache_write_tokens,
                },
                "tool_calls": answer.tool_calls,
                "files_read": answer.files_read,
                "cost_usd": answer.cost_usd,
                "context_pct": round(answer.context_pct, 1),
                "timed_out": answer.timed_out,
                "stop_reason": answer.stop_reason,
                "provider_s": round(answer.provider_s, 6),
                "sources": [dataclasses.asdict(s) for s in answer.sources],
            }
        )

    async def enqueue(request: Request) -> Response:
        return ORJSONResponse(await _service(request).enqueue(await _body(request)))

    async def export(request: Request) -> Response:
        return ORJSONResponse(await _service(request).export(request.query_params.get("cwd")))

    async def import_facts(request: Request) -> Response:
        return ORJSONResponse(await _service(request).import_facts(await _body(request)))

    async def banner(request: Request) -> Response:
        summary = request.query_params.get("summary") in ("1", "true")
        spool = request.query_params.get("spool")
        if spool:  # a session's first contact after the server was down: drain its spool first
            await request.app.state.spools.named(spool)
        body = await _service(request).banner(request.query_params.get("cwd"), summary=summary)
        return ORJSONResponse(body)

    async def open_workspace(request: Request) -> Response:
        """A session starts in `cwd`: load its workspace (notifications alone never create
        one) and answer the banner. Body `{cwd, summary?, spool?}`."""
        body = _object(await _body(request))
        spool = body.get("spool")
        if isinstance(spool, str) and spool:
            await request.app.state.spools.named(spool)
        service = _service(request)
        summary = body.get("summary") is True
        return ORJSONResponse(await service.banner(body.get("cwd"), summary=summary, activate=True))

    return [
        Route("/health", _guarded(health), methods=["GET"]),
        Route(IDENTITY_PATH, _guarded(identity), methods=["GET"]),
        Route("/stats", _guarded(stats), methods=["GET"]),
        Route("/reset", _guarded(reset), methods=["POST"]),
        Route("/clear", _guarded(clear), methods=["POST"]),
        Route("/reload", _guarded(reload_config), methods=["POST"]),
        Route("/actors", _guarded(actors), methods=["GET"]),
        Route("/api/ask", _guarded(api_ask), methods=["POST"]),
        Route("/api/enqueue", _guarded(enqueue), methods=["POST"]),
        Route("/api/export", _guarded(export), methods=["GET"]),
        Route("/api/import", _guarded(import_facts), methods=["POST"]),
        Route("/api/banner", _guarded(banner), methods=["GET"]),
        Route("/api/open", _guarded(open_workspace), methods=["POST"]),
    ]
