"""The Anthropic Messages adapter: neutral ChatRequest ⇄ `POST /v1/messages`.

Cache breakpoints become `cache_control` markers on system blocks and on the last content block
of a flagged message (at most `MAX_CACHE_BREAKPOINTS`; the earliest extras are dropped). Usage
is normalised so `input_tokens` counts every prompt token, cached or not.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Required, TypedDict, cast

import anthropic
import httpx2
from anthropic.types import (
    AssistantMessageParam,
    CacheControlEphemeralParam,
    MessageParam,
    TextBlockParam,
    ToolChoiceAnyParam,
    ToolParam,
    ToolResultBlockParam,
    ToolUseBlockParam,
    UserMessageParam,
)

from live_memory.config import constants
from live_memory.errors import ProviderAuthError, ProviderBadResponse
from live_memory.providers.retry import DEFAULT_RETRY_POLICY, RetryPolicy, with_retries
from live_memory.providers.types import (
    BearerTokenSource,
    ChatRequest,
    ChatResponse,
    StopReason,
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

ContentParam = TextBlockParam | ToolUseBlockParam | ToolResultBlockParam


class AnthropicProvider:
    """A Provider speaking the Anthropic Messages API through `anthropic.AsyncAnthropic`.

    Pass `api_key` for a console key, or `auth_token` for an OAuth bearer token — a string, a
    callable, or a `BearerTokenSource`, asked before every call so a refreshed token is picked
    up (all are sent as `Authorization: Bearer`). A source's token refused with 401 is
    invalidated and the call tried once more with the next one. One SDK client, on the
    event loop that uses it; call `aclose()` on that loop before it ends.
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
        self._retry = retry
        self._sleep = sleep
        self._token_source = None if isinstance(auth_token, str) else auth_token
        token = auth_token if isinstance(auth_token, str) and auth_token else None
        # The SDK falls back to environment credentials when given none; never let it.
        key = None if token or self._token_source else (api_key or "")
        bearer = "" if self._token_source else token  # "" = sent per call instead
        self._secrets = tuple(s for s in (api_key, token) if s)
        headers = dict(default_headers or {})
        self._make_client: Callable[[], anthropic.AsyncAnthropic] = lambda: (
            anthropic.AsyncAnthropic(
                base_url=self._base_url,
                max_retries=0,
                timeout=constants.PROVIDER_DEFAULT_TIMEOUT_S,
                default_headers=headers,
                api_key=key,
                auth_token=bearer,
            )
        )
        self._client: anthropic.AsyncAnthropic | None = None
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
        params = build_messages_params(request)
        deadline = None if request.timeout_s is None else time.monotonic() + request.timeout_s
        source = self._token_source

        async def send(token: str | None) -> anthropic.types.Message:
            headers = {"Authorization": f"Bearer {token}"} if token else None

            async def call() -> anthropic.types.Message:
                # Streamed, so giving up (deadline, cancel) closes the connection and the
                # server stops generating; the tap gets the text as it comes.
                tap = request.tap
                if tap is not None:
                    tap.reset()
                started = time.monotonic()
                async with client.messages.stream(
                    **params, extra_headers=headers, timeout=_attempt_timeout(deadline)
                ) as stream:
                    async for event in stream:
                        if tap is not None and event.type == "text" and event.text:
                            if tap.first_token_s is None:
                                tap.first_token_s = time.monotonic() - started
                            tap.add_text(event.text)
                    try:
                        return await stream.get_final_message()
                    except AssertionError:  # the SDK's way of saying no message_start came
                        # ValueError: the retry layer reports a bad response, not retried.
                        raise ValueError("the stream carried no message") from None

            return await with_retries(
                call,
                provider=self.name,
                endpoint=f"{self._base_url}/v1/messages",
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

    def _client_for_this_loop(self) -> anthropic.AsyncAnthropic:
        # The server makes every call on its one I/O loop. A caller that runs each call in a
        # fresh loop (asyncio.run) gets a fresh client: a connection pool is bound to its loop.
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            self._client, self._client_loop = self._make_client(), loop
        return self._client

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None and self._client_loop is asyncio.get_running_loop():
            await client.close()


class MessagesParams(TypedDict, total=False):
    """The `messages.create` keyword arguments we send (besides `timeout`)."""

    model: Required[str]
    max_tokens: Required[int]
    messages: Required[list[MessageParam]]
    system: list[TextBlockParam]
    tools: list[ToolParam]
    tool_choice: ToolChoiceAnyParam


def build_messages_params(request: ChatRequest) -> MessagesParams:
    """The `messages.create` keyword arguments for a request (without `timeout`)."""
    control = _cache_control(request)
    marked: list[ContentParam] = []
    system: list[TextBlockParam] = []
    for block in request.system:
        text_param: TextBlockParam = {"type": "text", "text": block.text}
        if block.cache_breakpoint:
            marked.append(text_param)
        system.append(text_param)
    messages: list[MessageParam] = []
    for message in request.messages:
        content = [_content_param(b) for b in message.blocks if not _is_empty_text(b)]
        if message.cache_breakpoint and content:
            marked.append(content[-1])
        if message.role == "user":
            messages.append(UserMessageParam(role="user", content=content))
        else:
            messages.append(AssistantMessageParam(role="assistant", content=content))
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


def _cache_control(request: ChatRequest) -> CacheControlEphemeralParam:
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
    result: ToolResultBlockParam = {
        "type": "tool_result",
        "tool_use_id": block.tool_call_id,
        "content": block.content,
    }
    if block.is_error:
        result["is_error"] = True
    return result


def _tool_param(spec: ToolSpec) -> ToolParam:
    schema = cast(Any, dict(spec.input_schema))
    return {"name": spec.name, "description": spec.description, "input_schema": schema}


def _attempt_timeout(deadline: float | None) -> httpx2.Timeout:
    # An explicit timeout also lifts the SDK's refusal of large non-streaming max_tokens.
    total = constants.PROVIDER_DEFAULT_TIMEOUT_S
    if deadline is not None:
        total = max(constants.MIN_CALL_TIMEOUT_S, deadline - time.monotonic())
    return httpx2.Timeout(total, connect=min(constants.PROVIDER_CONNECT_TIMEOUT_S, total))


def _parse_message(message: object, model: str, base_url: str) -> ChatResponse:
    content = getattr(message, "content", None)
    usage = getattr(message, "usage", None)
    if not isinstance(content, list) or usage is None:
        raise ProviderBadResponse(
            f"anthropic at {base_url} answered without content or usage (is the base URL right?)"
        )
    blocks: list[TextBlock | ToolCall] = []
    for item in content:
        if isinstance(item, anthropic.types.TextBlock):
            blocks.append(TextBlock(item.text))
        elif isinstance(item, anthropic.types.ToolUseBlock):
            arguments = item.input if isinstance(item.input, dict) else {}
            blocks.append(ToolCall(item.id, item.name, arguments))
    raw_stop = getattr(message, "stop_reason", None)
    stop: StopReason = _STOP_REASONS.get(str(raw_stop), "other")
    if stop != "tool_use" and any(isinstance(b, ToolCall) for b in blocks):
        stop = "tool_use"
    return ChatResponse(
        blocks=tuple(blocks),
        stop_reason=stop,
        usage=_usage(usage),
        model=str(getattr(message, "model", None) or model),
        raw_stop_reason=None if raw_stop is None else str(raw_stop),
    )


def _usage(usage: object) -> Usage:
    def count(field: str) -> int:
        value = getattr(usage, field, None)
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
