"""The Anthropic Messages adapter: neutral ChatRequest ⇄ `POST /v1/messages`.

Cache breakpoints become `cache_control` markers on system blocks and on the last content block
of a flagged message (at most `MAX_CACHE_BREAKPOINTS`; the earliest extras are dropped). Usage
is normalised so `input_tokens` counts every prompt token, cached or not.

The call is one streamed POST over httpx2 (the MCP transport's HTTP client, already loaded;
see anthropic_stream for why streamed), not the `anthropic` SDK: importing the SDK added about
40 MB to the server's resident set at the first question, and per call it deep-copied the whole
request (the history grows with every question) and built pydantic models of the reply. This
module owns only the wire format; retries, error classification and deadlines stay in `retry`
(max_retries was 0 with the SDK).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal, NotRequired, Required, TypedDict

import httpx2
import orjson

from live_memory import __version__
from live_memory.config import constants
from live_memory.errors import ProviderAuthError, ProviderBadResponse
from live_memory.providers.anthropic_stream import StreamError, assemble_stream, event_lines
from live_memory.providers.http_errors import (
    HttpConnectionError,
    HttpStatusError,
    HttpTimeoutError,
)
from live_memory.providers.retry import DEFAULT_RETRY_POLICY, RetryPolicy, with_retries
from live_memory.providers.types import (
    BearerTokenSource,
    ChatRequest,
    ChatResponse,
    StopReason,
    StreamTap,
    TextBlock,
    ToolCall,
    ToolResultBlock,
    ToolSpec,
    Usage,
)

__all__ = ["AnthropicProvider", "MessagesParams", "build_messages_params"]

logger = logging.getLogger(__name__)

_STOP_REASONS: Mapping[str, StopReason] = {
    "end_turn": "end_turn",
    "stop_sequence": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "model_context_window_exceeded": "max_tokens",
}


# An `error` event after the 200 (the API's error types) as the status it would have had, so
# the retry layer treats an overloaded stream like an overloaded answer.
_STREAM_ERROR_STATUS: Mapping[str, int] = {
    "overloaded_error": 529,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
}


class CacheControlParam(TypedDict):
    type: Literal["ephemeral"]
    ttl: NotRequired[str]


ContentParam = dict[str, Any]
"""One content block as sent: text, tool_use or tool_result (maybe with cache_control)."""


class MessageParam(TypedDict):
    role: Literal["user", "assistant"]
    content: list[ContentParam]


class AnthropicProvider:
    """A Provider speaking the Anthropic Messages API over HTTP.

    Pass `api_key` for a console key, or `auth_token` for an OAuth
    bearer token — a string, a callable, or a `BearerTokenSource`, asked before every call so
    a refreshed token is picked up (all are sent as `Authorization: Bearer`). A source's token
    refused with 401 is invalidated and the call tried once more with the next one. One HTTP
    client, on the event loop that uses it; call `aclose()` on that loop before it ends.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        *,
        auth_token: str | Callable[[], str] | BearerTokenSource | None = None,
        default_headers: Mapping[str, str] | None = None,
        retry: RetryPolicy = DEFAULT_RETRY_POLICY,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._base_url = _normalise_base_url(base_url)
        self._url = f"{self._base_url}/v1/messages"
        self._retry = retry
        self._sleep = sleep
        self._token_source = None if isinstance(auth_token, str) else auth_token
        token = auth_token if isinstance(auth_token, str) and auth_token else None
        self._secrets = tuple(s for s in (api_key, token) if s)
        headers = {
            "accept": "application/json",
            "content-type": "application/json",
            "anthropic-version": constants.ANTHROPIC_API_VERSION,
            "user-agent": f"live-memory/{__version__}",
        }
        # Never fall back to environment credentials: only what we were given is sent. A key
        # goes out as a bearer value, as the SDK sends it; a token source's token per call.
        static = token or (api_key if self._token_source is None else None)
        if static:
            headers["authorization"] = f"Bearer {static}"
        headers.update({k.lower(): v for k, v in (default_headers or {}).items()})
        self._headers = headers
        self._client: httpx2.AsyncClient | None = None
        self._client_loop: asyncio.AbstractEventLoop | None = None

    @property
    def name(self) -> str:
        return constants.PROVIDER_ANTHROPIC

    @property
    def endpoint(self) -> str:
        return self._base_url

    async def chat(self, request: ChatRequest) -> ChatResponse:
        """One Messages call with retries.

        `request.timeout_s`, when set, bounds the whole call including retries.
        Raises PromptTooLong, ProviderAuthError, ProviderBadResponse or ProviderError.
        """
        client = self._client_for_this_loop()
        body = orjson.dumps({**build_messages_params(request), "stream": True})
        deadline = None if request.timeout_s is None else time.monotonic() + request.timeout_s
        source = self._token_source

        async def send(token: str | None) -> dict[str, Any]:
            headers = {"authorization": f"Bearer {token}"} if token else None

            async def call() -> dict[str, Any]:
                return await self._post(client, body, headers, deadline, request.tap)

            return await with_retries(
                call,
                provider=self.name,
                endpoint=self._url,
                policy=self._retry,
                deadline=deadline,
                secrets=(*self._secrets, token) if token else self._secrets,
                sleep=self._sleep,
            )

        if isinstance(source, BearerTokenSource):
            token = await source.token()
            try:
                message = await send(token)
            except ProviderAuthError as exc:
                # 401: revoked by a refresh elsewhere, or expired early; one more try. A 403
                # (no access to this model) would fail with any token: no refresh for it.
                if getattr(exc.__cause__, "status_code", None) != 401:
                    raise
                source.invalidate(token)
                retry_token = await source.token()
                if retry_token == token:
                    raise
                message = await send(retry_token)
        else:
            message = await send(source() if source is not None else None)
        return _parse_message(message, request.model, self._base_url)

    async def _post(
        self,
        client: httpx2.AsyncClient,
        body: bytes,
        headers: Mapping[str, str] | None,
        deadline: float | None,
        tap: StreamTap | None,
    ) -> dict[str, Any]:
        """One streamed attempt: the reply put back together, or an http_errors exception
        (ValueError for a body that is not a reply). Leaving early closes the connection."""
        http_request = client.build_request(
            "POST", self._url, content=body, headers=headers, timeout=_attempt_timeout(deadline)
        )
        try:
            response = await client.send(http_request, stream=True)
            try:
                if not response.is_success:
                    await response.aread()
                    raise HttpStatusError(response)
                lines = event_lines(response.aiter_bytes(), constants.STREAM_LINE_MAX_BYTES)
                return await assemble_stream(lines, tap)
            except StreamError as exc:
                status = _STREAM_ERROR_STATUS.get(exc.kind, 400)
                error = {"type": "error", "error": {"type": exc.kind, "message": exc.message}}
                raise HttpStatusError(response, status=status, body=error) from exc
            finally:
                await response.aclose()
        except httpx2.TimeoutException as exc:
            raise HttpTimeoutError(f"timed out: {exc}", http_request) from exc
        except httpx2.TransportError as exc:
            raise HttpConnectionError(f"connection failed: {exc}", http_request) from exc

    def _client_for_this_loop(self) -> httpx2.AsyncClient:
        # The server makes every call on its one I/O loop. A caller that runs each call in a
        # fresh loop (asyncio.run) gets a fresh client: a connection pool is bound to its loop.
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            self._client = httpx2.AsyncClient(
                headers=self._headers,
                timeout=constants.PROVIDER_DEFAULT_TIMEOUT_S,
                follow_redirects=False,
            )
            self._client_loop = loop
        return self._client

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None and self._client_loop is asyncio.get_running_loop():
            await client.aclose()


class MessagesParams(TypedDict, total=False):
    """The JSON body of `POST /v1/messages`."""

    model: Required[str]
    max_tokens: Required[int]
    messages: Required[list[MessageParam]]
    system: list[ContentParam]
    tools: list[dict[str, Any]]
    tool_choice: dict[str, str]


def build_messages_params(request: ChatRequest) -> MessagesParams:
    """The request body for `request`."""
    control = _cache_control(request)
    marked: list[ContentParam] = []
    system: list[ContentParam] = []
    for block in request.system:
        text_param: ContentParam = {"type": "text", "text": block.text}
        if block.cache_breakpoint:
            marked.append(text_param)
        system.append(text_param)
    messages: list[MessageParam] = []
    for message in request.messages:
        content = [_content_param(b) for b in message.blocks if not _is_empty_text(b)]
        if message.cache_breakpoint and content:
            marked.append(content[-1])
        role: Literal["user", "assistant"] = "user" if message.role == "user" else "assistant"
        messages.append({"role": role, "content": content})
    extra = len(marked) - constants.MAX_CACHE_BREAKPOINTS
    if extra > 0:
        logger.warning(
            "request asks for %d cache breakpoints, the API allows %d; dropping the first %d",
            len(marked),
            constants.MAX_CACHE_BREAKPOINTS,
            extra,
        )
    for param in marked[max(extra, 0) :]:
        param["cache_control"] = control
    params: MessagesParams = {
        "model": request.model,
        "max_tokens": request.max_tokens,
        "messages": messages,
    }
    if system:
        params["system"] = system
    if request.tools:
        params["tools"] = [_tool_param(t) for t in request.tools]
        if request.tool_choice == "any":
            params["tool_choice"] = {"type": "any"}
    return params


def _cache_control(request: ChatRequest) -> CacheControlParam:
    if request.cache_ttl is None:
        return {"type": "ephemeral"}
    return {"type": "ephemeral", "ttl": request.cache_ttl}


def _is_empty_text(block: object) -> bool:
    # The API rejects empty text blocks; an empty one carries nothing anyway.
    return isinstance(block, TextBlock) and not block.text


def _content_param(block: TextBlock | ToolCall | ToolResultBlock) -> ContentParam:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, ToolCall):
        arguments = dict(block.arguments)
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": arguments}
    result: ContentParam = {
        "type": "tool_result",
        "tool_use_id": block.tool_call_id,
        "content": block.content,
    }
    if block.is_error:
        result["is_error"] = True
    return result


def _tool_param(spec: ToolSpec) -> dict[str, Any]:
    schema = dict(spec.input_schema)  # orjson encodes dicts, not other Mappings
    return {"name": spec.name, "description": spec.description, "input_schema": schema}


def _attempt_timeout(deadline: float | None) -> httpx2.Timeout:
    total = constants.PROVIDER_DEFAULT_TIMEOUT_S
    if deadline is not None:
        total = max(constants.MIN_CALL_TIMEOUT_S, deadline - time.monotonic())
    return httpx2.Timeout(total, connect=min(constants.PROVIDER_CONNECT_TIMEOUT_S, total))


def _parse_message(message: Mapping[str, Any], model: str, base_url: str) -> ChatResponse:
    content = message.get("content")
    usage = message.get("usage")
    if not isinstance(content, list) or not isinstance(usage, dict):
        raise ProviderBadResponse(
            f"anthropic at {base_url} answered without content or usage (is the base URL right?)"
        )
    blocks: list[TextBlock | ToolCall] = []
    for item in content:
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "text" and isinstance(item.get("text"), str):
            blocks.append(TextBlock(item["text"]))
        elif kind == "tool_use" and isinstance(item.get("id"), str):
            arguments = item.get("input")
            name = item.get("name")
            blocks.append(
                ToolCall(
                    item["id"],
                    name if isinstance(name, str) else "",
                    arguments if isinstance(arguments, dict) else {},
                )
            )
    raw_stop = message.get("stop_reason")
    stop: StopReason = _STOP_REASONS.get(str(raw_stop), "other")
    if stop != "tool_use" and any(isinstance(b, ToolCall) for b in blocks):
        stop = "tool_use"
    return ChatResponse(
        blocks=tuple(blocks),
        stop_reason=stop,
        usage=_usage(usage),
        model=str(message.get("model") or model),
        raw_stop_reason=None if raw_stop is None else str(raw_stop),
    )


def _usage(usage: Mapping[str, object]) -> Usage:
    def count(field: str) -> int:
        value = usage.get(field)
        return value if isinstance(value, int) else 0

    write = count("cache_creation_input_tokens")
    read = count("cache_read_input_tokens")
    return Usage(
        input_tokens=count("input_tokens") + write + read,
        output_tokens=count("output_tokens"),
        cache_read_tokens=read,
        cache_write_tokens=write,
    )


def _normalise_base_url(base_url: str) -> str:
    # The SDK appends /v1/messages itself; a pasted ".../v1" would double it.
    url = base_url.rstrip("/")
    if url.endswith("/v1"):
        url = url[: -len("/v1")]
    return url
