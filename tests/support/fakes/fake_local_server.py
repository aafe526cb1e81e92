"""A replaying fake of a local OpenAI-compatible model server (llama.cpp and friends).

    with FakeLocalServer(flavour="llama-server", n_ctx=8192) as fake:
        fake.script(WritesCall("click.ArgumentParser", {"file_path": "src/click/core.py"}))
        provider = OpenAIProvider(fake.openai_base_url, None)   # the real openai SDK
        ...
        assert fake.requests[0].body["tool_choice"] == "required"

It answers what the recorded small models answered (see `local_behaviours` and
tests/fixtures/local-model/README.md): no structured `tool_calls` unless scripted, tool calls as
text, echoed `<tool_response>` blocks, copies of earlier turns, `tool_choice` ignored. Replies
come from the script first, then `responder`, then `default`.

Flavours, as the real servers present themselves:
- `llama-server` (llama.cpp): `/health`, `/props` (`default_generation_settings.n_ctx`),
  `/slots`; usage with `prompt_tokens_details.cached_tokens`, plus `timings`
  (`cache_n`, `prompt_n`, `prompt_ms`, `predicted_n`, ...); a context overflow is a 400
  `exceed_context_size_error`.
- `llama-cpp-python` (`llama_cpp.server`): `/v1/models` only; usage without any cached-token
  field and no `timings`.
- `ollama`: `POST /api/show` (`model_info["<arch>.context_length"]`, `parameters`).
- `vllm`: `/v1/models` with `max_model_len`.
- `lm-studio`: `/api/v0/models` with `max_context_length` / `loaded_context_length`.

One slot with a KV cache, as llama.cpp has: a request reuses the longest common prefix of its
rendered prompt (a ChatML rendering) with the previous one (`cache_n`), the rest is
re-evaluated (`prompt_n`). Speeds are simulated (`prefill_tps`, `generate_tps`, defaults from
the recordings); nothing sleeps unless `pace` > 0 (real seconds per simulated second), and a
stream sends its pieces `pace`-spaced so a client can give up mid-way (`closed_early` counts
streams the client closed before the end).
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from tests.support.background_server import ServedFake
from tests.support.fakes import fake_local_wire as wire
from tests.support.fakes.fake_cache import common_prefix_len
from tests.support.fakes.fake_local_wire import Flavour
from tests.support.fakes.fake_replies import Recorded
from tests.support.fakes.local_behaviours import Behaviour, Says, Structured, reply_text

__all__ = ["FakeLocalServer", "Flavour", "LocalResponder"]

LocalResponder = Callable[[Recorded], Behaviour]

DEFAULT_MODEL = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
DEFAULT_BEHAVIOUR: Behaviour = Says("I could not find that in the repository.")
_STREAM_PIECE_CHARS = 12
HOLD_MAX_S = 60.0
"""A held reply goes on after this even if the test never released it (a failing test)."""


class FakeLocalServer(ServedFake):
    """The fake server; use as a context manager, or `start()` / `stop()`."""

    def __init__(
        self,
        *,
        flavour: Flavour = "llama-server",
        n_ctx: int = 32768,
        model: str = DEFAULT_MODEL,
        default: Behaviour = DEFAULT_BEHAVIOUR,
        prefill_tps: float = 25.0,
        generate_tps: float = 5.0,
        pace: float = 0.0,
    ) -> None:
        self.flavour: Flavour = flavour
        self.n_ctx = n_ctx
        self.model = model
        self.default = default
        self.prefill_tps = prefill_tps
        self.generate_tps = generate_tps
        self.pace = pace
        self._cond = threading.Condition()
        self._script: deque[Behaviour] = deque()
        self._responder: LocalResponder | None = None
        self._requests: list[Recorded] = []
        self._slot_prompt = ""
        self._busy = 0
        self.closed_early = 0
        self._ids = itertools.count(1)
        super().__init__(self._app(), "fake local server")

    @property
    def url(self) -> str:
        return self._base_url

    @property
    def openai_base_url(self) -> str:
        return f"{self._base_url}/v1"

    # --- scripting and inspection ---------------------------------------------------------

    def script(self, *behaviours: Behaviour) -> None:
        """Queue behaviours; each chat request consumes the next one."""
        with self._cond:
            self._script.extend(behaviours)

    @property
    def responder(self) -> LocalResponder | None:
        with self._cond:
            return self._responder

    @responder.setter
    def responder(self, responder: LocalResponder | None) -> None:
        with self._cond:
            self._responder = responder

    @property
    def requests(self) -> list[Recorded]:
        """Every request received (chat and probes), oldest first."""
        with self._cond:
            return list(self._requests)

    @property
    def chat_requests(self) -> list[Recorded]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def wait_for_requests(self, count: int, timeout_s: float = 10.0) -> list[Recorded]:
        """Block until `count` chat requests arrived; TimeoutError after `timeout_s`."""
        with self._cond:
            if not self._cond.wait_for(lambda: len(self._chats()) >= count, timeout_s):
                raise TimeoutError(f"got {len(self._chats())} of {count} chat requests")
            return self._chats()

    def wait_idle(self, timeout_s: float = 10.0) -> bool:
        """Whether the slot went idle (no generation running) within `timeout_s`."""
        with self._cond:
            return self._cond.wait_for(lambda: self._busy == 0, timeout_s)

    def pending(self) -> int:
        with self._cond:
            return len(self._script)

    def reset(self) -> None:
        """Forget the script, responder, requests and the slot's cache."""
        with self._cond:
            self._script.clear()
            self._responder = None
            self._requests.clear()
            self._slot_prompt = ""
            self.closed_early = 0

    def _chats(self) -> list[Recorded]:
        return [r for r in self._requests if r.path.endswith("/chat/completions")]

    # --- the app ---------------------------------------------------------------------------

    def _app(self) -> Starlette:
        routes = [
            Route("/v1/chat/completions", self._chat, methods=["POST"]),
            Route("/v1/models", self._models, methods=["GET"]),
        ]
        if self.flavour == "llama-server":
            routes += [
                Route("/health", self._health, methods=["GET"]),
                Route("/props", self._props, methods=["GET"]),
                Route("/slots", self._slots, methods=["GET"]),
            ]
        elif self.flavour == "ollama":
            routes.append(Route("/api/show", self._ollama_show, methods=["POST"]))
        elif self.flavour == "lm-studio":
            routes.append(Route("/api/v0/models", self._models, methods=["GET"]))
        return Starlette(routes=routes)

    async def _record(self, request: Request) -> dict[str, Any]:
        raw = await request.body()
        try:
            decoded = orjson.loads(raw) if raw else {}
        except orjson.JSONDecodeError:
            decoded = None
        body: dict[str, Any] = decoded if isinstance(decoded, dict) else {}
        headers = {k.lower(): v for k, v in request.headers.items()}
        with self._cond:
            self._requests.append(
                Recorded(request.url.path, body, headers, "openai", time.monotonic(), raw)
            )
            self._cond.notify_all()
        return body

    async def _health(self, request: Request) -> Response:
        await self._record(request)
        return _json({"status": "ok"})

    async def _props(self, request: Request) -> Response:
        await self._record(request)
        return _json(wire.props_body(self.n_ctx, self.model))

    async def _slots(self, request: Request) -> Response:
        await self._record(request)
        with self._cond:
            busy = self._busy > 0
        return _json([{"id": 0, "n_ctx": self.n_ctx, "is_processing": busy}])

    async def _models(self, request: Request) -> Response:
        await self._record(request)
        return _json(wire.models_body(self.flavour, self.n_ctx, self.model))

    async def _ollama_show(self, request: Request) -> Response:
        await self._record(request)
        return _json(wire.ollama_show_body(self.n_ctx))

    async def _chat(self, request: Request) -> Response:
        body = await self._record(request)
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            error = wire.error_body("messages must be a non-empty array", "invalid_request_error")
            return _json(error, 400)
        behaviour = self._next(self._requests[-1])
        prompt = wire.render_prompt(messages, body.get("tools") or [])
        max_tokens = int(body.get("max_tokens") or body.get("max_completion_tokens") or 256)
        total = wire.tokens(len(prompt))
        if total + max_tokens > self.n_ctx:
            return _json(wire.overflow_error(self.flavour, total + max_tokens, self.n_ctx), 400)
        with self._cond:
            common = common_prefix_len(self._slot_prompt.encode(), prompt.encode())
            cache_n = min(int(common / wire.CHARS_PER_TOKEN), total - 1)
            self._slot_prompt = prompt
        content, truncated, calls = self._reply(behaviour, messages)
        predicted = max_tokens if truncated else min(wire.tokens(len(content)), max_tokens)
        finish = "tool_calls" if calls else ("length" if truncated else "stop")
        tail = wire.usage_and_timings(
            self.flavour, total, cache_n, predicted, (self.prefill_tps, self.generate_tps)
        )
        chat_id = f"chatcmpl-local{next(self._ids):05d}"
        hold = behaviour.hold if isinstance(behaviour, Says) else None
        if body.get("stream"):
            return self._stream(
                chat_id,
                content,
                calls=calls,
                finish=finish,
                tail=tail,
                prompt_n=total - cache_n,
                hold=hold,
            )
        if hold is not None:
            await asyncio.to_thread(hold.wait, HOLD_MAX_S)
        with self._cond:
            self._busy += 1
        try:
            await self._sleep(_seconds(total - cache_n, self.prefill_tps))
            await self._sleep(_seconds(predicted, self.generate_tps))
        finally:
            with self._cond:
                self._busy -= 1
                self._cond.notify_all()
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if calls:
            message["tool_calls"] = calls
        return _json(
            wire.completion_body(
                chat_id=chat_id,
                model=self.model,
                message=message,
                finish=finish,
                usage=tail[0],
                timings=tail[1],
            )
        )

    def _reply(
        self, behaviour: Behaviour, messages: list[Any]
    ) -> tuple[str, bool, list[dict[str, Any]]]:
        """(content, cut at max_tokens, structured tool calls) for a behaviour."""
        if not isinstance(behaviour, Structured):
            content, truncated = reply_text(behaviour, messages)
            return content, truncated, []
        arguments = orjson.dumps(dict(behaviour.arguments)).decode()
        call = {
            "id": f"call_local{next(self._ids):05d}",
            "type": "function",
            "function": {"name": behaviour.name, "arguments": arguments},
        }
        return "", False, [call]

    def _next(self, recorded: Recorded) -> Behaviour:
        with self._cond:
            if self._script:
                return self._script.popleft()
            responder = self._responder
        return responder(recorded) if responder is not None else self.default

    def _stream(
        self,
        chat_id: str,
        content: str,
        *,
        calls: list[dict[str, Any]],
        finish: str,
        tail: tuple[dict[str, Any], dict[str, Any] | None],
        prompt_n: int,
        hold: threading.Event | None = None,
    ) -> StreamingResponse:
        step = _STREAM_PIECE_CHARS
        pieces = [content[i : i + step] for i in range(0, len(content), step)]
        piece_s = _seconds(tail[0]["completion_tokens"], self.generate_tps) / max(len(pieces), 1)

        def chunk(delta: dict[str, Any], end: bool = False) -> bytes:
            if not end:
                return wire.chunk_bytes(chat_id, self.model, delta)
            return wire.chunk_bytes(chat_id, self.model, delta, finish, tail)

        async def events() -> AsyncIterator[bytes]:
            with self._cond:
                self._busy += 1
            done = False
            try:
                await self._sleep(_seconds(prompt_n, self.prefill_tps))
                yield chunk({"role": "assistant", "content": ""})
                for number, piece in enumerate(pieces):
                    await self._sleep(piece_s)
                    yield chunk({"content": piece})
                    if number == 0 and hold is not None:
                        await asyncio.to_thread(hold.wait, HOLD_MAX_S)
                for index, call in enumerate(calls):
                    yield chunk({"tool_calls": [{"index": index, **call}]})
                yield chunk({}, end=True)
                yield b"data: [DONE]\n\n"
                done = True
            finally:
                with self._cond:
                    self._busy -= 1
                    if not done:
                        self.closed_early += 1
                    self._cond.notify_all()

        return StreamingResponse(events(), media_type="text/event-stream")

    async def _sleep(self, simulated_s: float) -> None:
        if self.pace > 0 and simulated_s > 0:
            await asyncio.sleep(simulated_s * self.pace)


def _seconds(tokens: int, per_second: float) -> float:
    return tokens / per_second if per_second > 0 else 0.0


def _json(payload: object, status: int = 200) -> Response:
    return Response(orjson.dumps(payload), status, media_type="application/json")
