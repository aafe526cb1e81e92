"""A fake model provider over real HTTP, speaking both wire formats.

    with FakeProvider() as fake:
        fake.script(ToolUse("Read", {"file_path": "a.py"}), Text("It parses args."))
        provider = AnthropicProvider(fake.anthropic_base_url, "test-key")
        ...
        assert fake.wait_for_requests(2)[1].body["messages"][-1]["role"] == "user"

Routes: `POST /v1/messages` (Anthropic, JSON or SSE), the same Messages API as Bedrock and Vertex
serve it (`fake_cloud_wire`: `/model/<m>/invoke[-with-response-stream]`, `/v1/projects/<p>/
locations/<r>/publishers/anthropic/models/<m>:[stream]rawPredict`, and Google's `/token`), and
`POST /v1/chat/completions` (OpenAI, JSON or chunked SSE). Replies come from the script queue
first, then `responder`, then `default_reply`. Usage numbers come from a simulated prefix cache
(see `fake_cache`), so cache behaviour is testable end to end. uvicorn serves it on 127.0.0.1
and an ephemeral port, in a background thread (`background_server`); every request is recorded.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from live_memory.config import constants
from tests.support.background_server import ServedFake
from tests.support.fakes import fake_anthropic_wire as anthropic_wire
from tests.support.fakes import fake_cloud_wire as cloud_wire
from tests.support.fakes import fake_openai_wire as openai_wire
from tests.support.fakes.fake_cache import PrefixCache
from tests.support.fakes.fake_replies import (
    CacheStats,
    Error,
    Malformed,
    Recorded,
    Reply,
    Text,
    ToolUse,
    Wire,
)

__all__ = ["FakeProvider", "Responder"]

logger = logging.getLogger(__name__)

Responder = Callable[[Recorded], Reply]

DEFAULT_REPLY = Text("This is the fake provider's answer.")
_OPENAI_CACHE_STEP = 128
_DEEPSEEK_CACHE_STEP = 64
HOLD_MAX_S = 600.0  # a held reply is sent anyway after this (a test that forgot to release)

_HOLD_LIMIT_S = 120.0  # a held reply is released by then even if a test forgot to


class FakeProvider(ServedFake):
    """The fake server; use as a context manager, or `start()` / `stop()`."""

    def __init__(
        self,
        *,
        default_reply: Reply = DEFAULT_REPLY,
        require_key: str | None = None,
        deepseek_usage: bool = False,
        chars_per_token: float = constants.CHARS_PER_TOKEN,
        aws_credentials: tuple[str, str] | None = None,
    ) -> None:
        """`require_key`: refuse requests without `Bearer <key>` or `x-api-key: <key>`.
        `aws_credentials` (key id, secret): refuse Bedrock requests not SigV4-signed with them.
        `deepseek_usage`: report OpenAI-side usage the DeepSeek way
        (`prompt_cache_hit/miss_tokens`), caching every prompt in 64-token units."""
        self.default_reply = default_reply
        self._require_key = require_key
        self._deepseek = deepseek_usage
        self._aws_credentials = aws_credentials
        self._cond = threading.Condition()
        self._script: deque[Reply] = deque()
        self._responder: Responder | None = None
        self._requests: list[Recorded] = []
        self._answered = 0  # requests whose reply (after any delay or hold) has been decided
        self._cache = PrefixCache(chars_per_token)
        self._stats = CacheStats()
        self._generation = 0  # bumped by reset(), so a reply delayed across it is dropped
        self._ids = itertools.count(1)
        self._hold: threading.Event | None = None
        super().__init__(self._app(), "fake provider")

    @property
    def url(self) -> str:
        """Base URL, e.g. http://127.0.0.1:PORT (this is the Anthropic base URL)."""
        return self._base_url

    @property
    def anthropic_base_url(self) -> str:
        return self.url

    @property
    def openai_base_url(self) -> str:
        return f"{self.url}/v1"

    # --- scripting and inspection ---------------------------------------------------------

    def script(self, *replies: Reply) -> None:
        """Queue replies; each request consumes the next one, whatever its wire."""
        with self._cond:
            self._script.extend(replies)

    @property
    def responder(self) -> Responder | None:
        """Called for each request when the script is empty; its reply is sent."""
        with self._cond:
            return self._responder

    @responder.setter
    def responder(self, responder: Responder | None) -> None:
        with self._cond:
            self._responder = responder

    @property
    def requests(self) -> list[Recorded]:
        """A copy of every request received, oldest first."""
        with self._cond:
            return list(self._requests)

    def wait_for_requests(self, count: int, timeout_s: float = 5.0) -> list[Recorded]:
        """Block until at least `count` requests arrived; raises TimeoutError after
        `timeout_s`."""
        with self._cond:
            if not self._cond.wait_for(lambda: len(self._requests) >= count, timeout_s):
                raise TimeoutError(
                    f"fake provider got {len(self._requests)} of {count} requests in {timeout_s}s"
                )
            return list(self._requests)

    def wait_for_answers(self, count: int, timeout_s: float = 5.0) -> None:
        """Block until at least `count` replies went out (delays and holds over); raises
        TimeoutError after `timeout_s`."""
        with self._cond:
            if not self._cond.wait_for(lambda: self._answered >= count, timeout_s):
                raise TimeoutError(
                    f"fake provider answered {self._answered} of {count} in {timeout_s}s"
                )

    def cache_stats(self) -> CacheStats:
        with self._cond:
            return self._stats

    def pending_replies(self) -> int:
        with self._cond:
            return len(self._script)

    def hold(self) -> threading.Event:
        """Hold every reply from now on until the returned event is set (or `reset()`), so
        a question stays in flight exactly as long as a test needs."""
        gate = threading.Event()
        with self._cond:
            self._hold = gate
        return gate

    def reset(self) -> None:
        """Forget the script, responder, recorded requests, cache and stats; release a hold."""
        with self._cond:
            if self._hold is not None:
                self._hold.set()
                self._hold = None
            self._script.clear()
            self._responder = None
            self._requests.clear()
            self._answered = 0
            self._cache.clear()
            self._stats = CacheStats()
            self._generation += 1

    # --- the app ------------------------------------------------------------------------------

    def _app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/v1/messages", self._anthropic, methods=["POST"]),
                Route("/model/{model}/{action}", self._bedrock, methods=["POST"]),
                Route(
                    "/v1/projects/{project}/locations/{region}/publishers/anthropic/models/{spec}",
                    self._vertex,
                    methods=["POST"],
                ),
                Route("/token", self._google_token, methods=["POST"]),
                Route("/v1/chat/completions", self._openai, methods=["POST"]),
            ]
        )

    async def _bedrock(self, request: Request) -> Response:
        if self._aws_credentials is not None:
            raw = await request.body()
            headers = {k.lower(): v for k, v in request.headers.items()}
            url = str(request.url)
            wrong = cloud_wire.check_sigv4("POST", url, headers, raw, self._aws_credentials)
            if wrong is not None:
                await self._admit(request, "anthropic")  # recorded, as every request is
                return _json({"message": f"SignatureDoesNotMatch: {wrong}"}, 403)
        action = request.path_params["action"]
        stream = action == "invoke-with-response-stream"
        if not stream and action != "invoke":
            return _json({"message": f"UnknownOperationException: {action}"}, 404)
        model = str(request.path_params["model"])
        return await self._anthropic(request, model=model, stream=stream, framing="aws")

    async def _vertex(self, request: Request) -> Response:
        model, _, method = str(request.path_params["spec"]).rpartition(":")
        if method not in ("rawPredict", "streamRawPredict"):
            return _json({"error": {"message": f"unknown method {method}"}}, 404)
        stream = method == "streamRawPredict"
        return await self._anthropic(request, model=model, stream=stream, framing="sse")

    async def _google_token(self, request: Request) -> Response:
        await request.body()
        return _json(dict(cloud_wire.GOOGLE_TOKEN))

    async def _anthropic(
        self,
        request: Request,
        *,
        model: str | None = None,
        stream: bool | None = None,
        framing: str = "sse",
    ) -> Response:
        """Anthropic's Messages API; on a cloud the model (and the streaming) are in the path,
        the body carries `anthropic_version` instead, and Bedrock streams in AWS frames."""
        body, reply_or_error = await self._admit(request, "anthropic")
        if isinstance(reply_or_error, Response):
            return reply_or_error
        if model is not None:
            if "model" in body or not isinstance(body.get("anthropic_version"), str):
                problem = "model belongs in the path, anthropic_version in the body"
                error = Error(400, "invalid_request_error", problem)
                return _json(anthropic_wire.error_body(error), 400)
            body = {**body, "model": model}
        problem = anthropic_wire.problem_with(body)
        if problem:
            return _json(
                anthropic_wire.error_body(Error(400, "invalid_request_error", problem)), 400
            )
        reply = await self._next_reply(reply_or_error)
        if isinstance(reply, Response):
            return reply
        model_name = str(body["model"])
        prompt, markers = anthropic_wire.prompt_of(body)
        with self._cond:
            usage = self._cache.anthropic(model_name, prompt, markers)
            self._count(
                usage.prompt_tokens,
                usage.cache_read_input_tokens,
                usage.cache_creation_input_tokens,
            )
        empty = body.get("max_tokens") == 0
        if body.get("stream") if stream is None else stream:
            events = anthropic_wire.sse_events(reply, model_name, usage, self._new_id, empty=empty)
            if framing == "aws":
                return _stream(cloud_wire.event_stream_frames(events), cloud_wire.EVENT_STREAM)
            return _stream(events)
        message = anthropic_wire.message_body(reply, model_name, usage, self._new_id, empty=empty)
        return _json(message)

    async def _openai(self, request: Request) -> Response:
        body, reply_or_error = await self._admit(request, "openai")
        if isinstance(reply_or_error, Response):
            return reply_or_error
        problem = openai_wire.problem_with(body)
        if problem:
            return _json(openai_wire.error_body(Error(400, "invalid_request_error", problem)), 400)
        reply = await self._next_reply(reply_or_error)
        if isinstance(reply, Response):
            return reply
        model = str(body["model"])
        prompt = openai_wire.prompt_of(body)
        key = body.get("prompt_cache_key")
        step = _DEEPSEEK_CACHE_STEP if self._deepseek else _OPENAI_CACHE_STEP
        with self._cond:
            cached = self._cache.openai(
                model, key if isinstance(key, str) else None, prompt, step, self._deepseek
            )
            total = self._cache.tokens(len(prompt))
            self._count(total, cached, 0)
        usage = openai_wire.usage_body(reply, total, cached, deepseek=self._deepseek)
        if body.get("stream"):
            options = body.get("stream_options") or {}
            chunks = openai_wire.stream_chunks(
                reply, model, usage, self._new_id, include_usage=bool(options.get("include_usage"))
            )
            return _stream(chunks)
        return _json(openai_wire.completion_body(reply, model, usage, self._new_id))

    async def _admit(
        self, request: Request, wire: Wire
    ) -> tuple[dict[str, Any], Recorded | Response]:
        """Record the request; refuse it when unreadable or unauthenticated."""
        raw = await request.body()
        try:
            decoded = orjson.loads(raw)
        except orjson.JSONDecodeError:
            decoded = None
        body: dict[str, Any] = decoded if isinstance(decoded, dict) else {}
        headers = {k.lower(): v for k, v in request.headers.items()}
        recorded = Recorded(request.url.path, body, headers, wire, time.monotonic(), raw)
        with self._cond:
            self._requests.append(recorded)
            self._cond.notify_all()
        error_body = anthropic_wire.error_body if wire == "anthropic" else openai_wire.error_body
        if self._require_key is not None and self._require_key not in (
            headers.get("x-api-key"),
            headers.get("authorization", "").removeprefix("Bearer "),
        ):
            return body, _json(error_body(Error.unauthorized()), 401)
        if decoded is None or not body:
            error = Error(400, "invalid_request_error", "the body is not a JSON object")
            return body, _json(error_body(error), 400)
        return body, recorded

    async def _next_reply(self, recorded: Recorded) -> Text | ToolUse | Response:
        try:
            return await self._decide_reply(recorded)
        finally:
            with self._cond:
                self._answered += 1
                self._cond.notify_all()

    async def _decide_reply(self, recorded: Recorded) -> Text | ToolUse | Response:
        with self._cond:
            gate = self._hold
        if gate is not None:
            await asyncio.to_thread(gate.wait, HOLD_MAX_S)
            with self._cond:
                if self._hold is gate:
                    self._hold = None
        with self._cond:
            scripted = self._script.popleft() if self._script else None
            responder = self._responder
            generation = self._generation
        if scripted is not None:
            reply = scripted
        else:
            reply = responder(recorded) if responder is not None else self.default_reply
        hold = reply.hold if isinstance(reply, Text) else None
        if hold is not None:
            await asyncio.to_thread(hold.wait, _HOLD_LIMIT_S)
        if reply.delay_s > 0 or hold is not None:
            if reply.delay_s > 0:
                await asyncio.sleep(reply.delay_s)
            with self._cond:
                if generation != self._generation:  # a later test must not see its usage
                    return Response(b"", 503)
        if isinstance(reply, Error):
            error_body = (
                anthropic_wire.error_body
                if recorded.wire == "anthropic"
                else openai_wire.error_body
            )
            headers = {}
            if reply.retry_after_s is not None:
                headers["retry-after"] = f"{reply.retry_after_s:g}"
            return _json(error_body(reply), reply.status, headers)
        if isinstance(reply, Malformed):
            return Response(reply.body, 200, media_type="application/json")
        return reply

    def _count(self, prompt: int, cached: int, written: int) -> None:
        stats = self._stats
        self._stats = CacheStats(
            stats.requests + 1,
            stats.prompt_tokens + prompt,
            stats.cached_tokens + cached,
            stats.cache_write_tokens + written,
        )

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}_fake{next(self._ids):06d}"


def _json(
    payload: dict[str, Any], status: int = 200, headers: dict[str, str] | None = None
) -> Response:
    return Response(orjson.dumps(payload), status, headers, media_type="application/json")


def _stream(chunks: Iterator[bytes], media_type: str = "text/event-stream") -> StreamingResponse:
    async def body() -> AsyncIterator[bytes]:
        for chunk in chunks:
            yield chunk

    return StreamingResponse(body(), media_type=media_type)
