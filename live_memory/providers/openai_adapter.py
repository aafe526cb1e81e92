"""The OpenAI-compatible adapter: neutral ChatRequest ⇄ `POST {base_url}/chat/completions`.

Works with OpenAI, DeepSeek, gateways and local servers (llama.cpp, vLLM, Ollama). Caching is
implicit there: the system blocks become one system message with the same bytes every time, and
the per-workspace `prompt_cache_key` routes requests to the same cache; api.openai.com models
known to accept it also get `prompt_cache_retention: "24h"` (see `endpoint`).

The output cap goes out as `max_completion_tokens` to OpenAI's own hosts (their reasoning
models refuse `max_tokens`) and as `max_tokens` everywhere else, the field every compatible
server understands; pass `token_limit_field` to choose.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal
from urllib.parse import urlsplit

import openai
import orjson
from openai.types.chat import ChatCompletionMessageParam, ChatCompletionToolParam

from live_memory.config import constants
from live_memory.providers.endpoint import prompt_cache_retention_for
from live_memory.providers.openai_reply import parse_completion, parse_stream
from live_memory.providers.openai_stream import StreamAssembly
from live_memory.providers.retry import (
    DEFAULT_RETRY_POLICY,
    RetryPolicy,
    attempt_timeout,
    with_retries,
)
from live_memory.providers.types import (
    ChatRequest,
    ChatResponse,
    Message,
    TextBlock,
    ToolCall,
    ToolResultBlock,
    ToolSpec,
)

__all__ = ["OpenAIProvider", "TokenLimitField", "build_chat_params"]

logger = logging.getLogger(__name__)

TokenLimitField = Literal["max_tokens", "max_completion_tokens"]

_OPENAI_HOSTS = ("api.openai.com", ".openai.azure.com")
_SYSTEM_SEPARATOR = "\n\n"
_ERROR_PREFIX = "ERROR: "
_NO_KEY = "no-key"  # local servers need none, but the SDK insists on some value


class OpenAIProvider:
    """A Provider speaking OpenAI chat completions through `openai.AsyncOpenAI`.

    One SDK client, on the event loop that uses it; call `aclose()` on that loop before it ends.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        *,
        token_limit_field: TokenLimitField | None = None,
        retry: RetryPolicy = DEFAULT_RETRY_POLICY,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        stream: bool = True,
        extra_body: Mapping[str, object] | None = None,
    ) -> None:
        """`extra_body`: fields merged into every request's JSON (LIVE_MEMORY_OPENAI_EXTRA_BODY)."""
        self._extra_body = dict(extra_body) if extra_body else None
        self._base_url = _normalise_base_url(base_url)
        self._stream = stream
        self._token_field = token_limit_field or _default_token_field(self._base_url)
        self._retry = retry
        self._sleep = sleep
        self._secrets = (api_key,) if api_key else ()
        self._make_client: Callable[[], openai.AsyncOpenAI] = lambda: openai.AsyncOpenAI(
            base_url=self._base_url,
            api_key=api_key or _NO_KEY,
            max_retries=0,
            timeout=constants.PROVIDER_DEFAULT_TIMEOUT_S,
        )
        self._client: openai.AsyncOpenAI | None = None
        self._client_loop: asyncio.AbstractEventLoop | None = None

    @property
    def name(self) -> str:
        return constants.PROVIDER_OPENAI

    @property
    def endpoint(self) -> str:
        return self._base_url

    async def chat(self, request: ChatRequest) -> ChatResponse:
        """One chat-completions call with retries, streamed unless `stream=False`.

        `request.timeout_s`, when set, bounds the whole call including retries. Cancelling
        the call closes the stream, so the server stops generating for nobody.
        Raises PromptTooLong, ProviderAuthError, ProviderBadResponse or ProviderError.
        """
        client = self._client_for_this_loop()
        retention = prompt_cache_retention_for(self._base_url, request.model)
        params = build_chat_params(request, self._token_field, cache_retention=retention)
        deadline = None if request.timeout_s is None else time.monotonic() + request.timeout_s

        async def call() -> ChatResponse:
            started = time.monotonic()
            if not self._stream:
                result = await client.chat.completions.create(
                    **params, extra_body=self._extra_body, timeout=attempt_timeout(deadline)
                )
                return parse_completion(result, request, self._base_url, started)
            if request.tap is not None:
                request.tap.reset()
            assembly = StreamAssembly(started, request.tap)
            stream = await client.chat.completions.create(
                **params,
                stream=True,
                stream_options={"include_usage": True},
                extra_body=self._extra_body,
                timeout=attempt_timeout(deadline),
            )
            async with stream:  # leaving it (done, failed or cancelled) closes the connection
                async for chunk in stream:
                    assembly.add(chunk, time.monotonic())
            return parse_stream(assembly, request)

        return await with_retries(
            call,
            provider=self.name,
            endpoint=f"{self._base_url}/chat/completions",
            policy=self._retry,
            deadline=deadline,
            secrets=self._secrets,
            sleep=self._sleep,
        )

    def _client_for_this_loop(self) -> openai.AsyncOpenAI:
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


def build_chat_params(
    request: ChatRequest,
    token_field: TokenLimitField = "max_tokens",
    *,
    cache_retention: str | None = None,
) -> dict[str, Any]:
    """The `chat.completions.create` keyword arguments for a request (without `timeout`)."""
    messages: list[ChatCompletionMessageParam] = []
    if request.system:
        system = _SYSTEM_SEPARATOR.join(b.text for b in request.system)
        messages.append({"role": "system", "content": system})
    for message in request.messages:
        messages.extend(_chat_messages(message))
    params: dict[str, Any] = {
        "model": request.model,
        "messages": messages,
        token_field: max(1, request.max_tokens),  # compatible servers refuse 0
    }
    if request.tools:
        params["tools"] = [_tool_param(t) for t in request.tools]
        if request.tool_choice == "any":
            params["tool_choice"] = "required"
    if request.cache_key:
        params["prompt_cache_key"] = request.cache_key
    if cache_retention:
        params["prompt_cache_retention"] = cache_retention
    return params


def _chat_messages(message: Message) -> list[ChatCompletionMessageParam]:
    texts = [b.text for b in message.blocks if isinstance(b, TextBlock)]
    text = "\n\n".join(texts)
    if message.role == "assistant":
        calls = [b for b in message.blocks if isinstance(b, ToolCall)]
        if not calls:
            return [{"role": "assistant", "content": text}]
        # content "" rather than null: several local servers reject a null content.
        return [
            {
                "role": "assistant",
                "content": text,
                "tool_calls": [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": _json(c.arguments)},
                    }
                    for c in calls
                ],
            }
        ]
    # Tool results must directly follow the assistant turn that asked for them.
    out: list[ChatCompletionMessageParam] = [
        {"role": "tool", "tool_call_id": b.tool_call_id, "content": _result_text(b)}
        for b in message.blocks
        if isinstance(b, ToolResultBlock)
    ]
    if texts or not out:
        out.append({"role": "user", "content": text})
    return out


def _result_text(block: ToolResultBlock) -> str:
    if block.is_error and not block.content.startswith(_ERROR_PREFIX):
        return _ERROR_PREFIX + block.content
    return block.content


def _tool_param(spec: ToolSpec) -> ChatCompletionToolParam:
    return {
        "type": "function",
        "function": {
            "name": spec.name,
            "description": spec.description,
            "parameters": dict(spec.input_schema),
        },
    }


def _json(value: Mapping[str, object]) -> str:
    return orjson.dumps(dict(value)).decode()


def _default_token_field(base_url: str) -> TokenLimitField:
    host = (urlsplit(base_url).hostname or "").lower()
    if host == _OPENAI_HOSTS[0] or host.endswith(_OPENAI_HOSTS[1]):
        return "max_completion_tokens"
    return "max_tokens"


def _normalise_base_url(base_url: str) -> str:
    # The SDK posts to {base_url}/chat/completions; a bare host needs the /v1 the servers use.
    url = base_url.rstrip("/")
    if urlsplit(url).path in ("", "/"):
        logger.info("OpenAI base URL %s has no path; using %s/v1", url, url)
        url = f"{url}/v1"
    return url
