"""REST routes: /health, /stats, /notify, /reset, /clear, /reload, /actors, /api/ask."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from live_memory.config import constants as C
from live_memory.errors import InputError, LiveMemoryError, PayloadTooLarge
from live_memory.gateway.error_map import error_response
from live_memory.gateway.json_response import ORJSONResponse
from live_memory.gateway.service import LiveMemoryService
from live_memory.gateway.stats_text import render_stats_text

__all__ = ["build_routes"]

Handler = Callable[[Request], Awaitable[Response]]


async def _body(request: Request) -> Any:
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > C.MAX_BODY_BYTES:
        raise PayloadTooLarge(f"body is {length} bytes; the limit is {C.MAX_BODY_BYTES}")
    raw = bytearray()
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > C.MAX_BODY_BYTES:
            raise PayloadTooLarge(f"body exceeds the limit of {C.MAX_BODY_BYTES} bytes")
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise InputError(f"body is not valid JSON: {exc}") from None


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

    async def stats(request: Request) -> Response:
        cwd = request.query_params.get("cwd")
        if not cwd:
            raise InputError("query parameter cwd (absolute workspace path) is required")
        body = await _service(request).stats(cwd)
        if request.query_params.get("format") == "text":
            return PlainTextResponse(render_stats_text(body))
        return ORJSONResponse(body)

    async def notify(request: Request) -> Response:
        outcome = await _service(request).notify(await _body(request))
        return ORJSONResponse({"accepted": outcome.accepted, "ignored": outcome.ignored})

    async def reset(request: Request) -> Response:
        return ORJSONResponse(
            await _service(request).reset(_object(await _body(request)).get("cwd"))
        )

    async def clear(request: Request) -> Response:
        return ORJSONResponse(
            await _service(request).clear(_object(await _body(request)).get("cwd"))
        )

    async def reload_config(request: Request) -> Response:
        return ORJSONResponse(await reload(request))

    async def actors(request: Request) -> Response:
        return ORJSONResponse(_service(request).actors())

    async def api_ask(request: Request) -> Response:
        body = _object(await _body(request))
        answer = await _service(request).ask(
            body.get("question"), body.get("cwd"), body.get("max_answer_tokens")
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
            }
        )

    return [
        Route("/health", _guarded(health), methods=["GET"]),
        Route("/stats", _guarded(stats), methods=["GET"]),
        Route("/notify", _guarded(notify), methods=["POST"]),
        Route("/reset", _guarded(reset), methods=["POST"]),
        Route("/clear", _guarded(clear), methods=["POST"]),
        Route("/reload", _guarded(reload_config), methods=["POST"]),
        Route("/actors", _guarded(actors), methods=["GET"]),
        Route("/api/ask", _guarded(api_ask), methods=["POST"]),
    ]
