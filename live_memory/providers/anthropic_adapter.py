"""The Anthropic Messages adapter: neutral ChatRequest ⇄ `POST /v1/messages`.

The body and the reply's parsing are the wire format's (anthropic_messages); this module
makes the call: the HTTP client, credentials, the stream's errors as statuses, retries.

The call is one streamed POST over httpx2 (the MCP transport's HTTP client, already loaded;
see anthropic_stream for why streamed), not the `anthropic` SDK: importing the SDK added about
40 MB to the server's resident set at the first question, and per call it deep-copied the whole
request (the history grows with every question) and built pydantic models of the reply.
Retries, error classification and deadlines stay in `retry` (max_retries was 0 with the SDK).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import httpx2
import orjson

from live_memory import __version__
from live_memory.config import constants
from live_memory.errors import ProviderAuthError
from live_memory.providers.anthropic_messages import (
    MessagesParams,
    build_messages_params,
    parse_message,
)
from live_memory.providers.anthropic_stream import StreamError, assemble_stream, event_lines
from live_memory.providers.http_errors import (
    HttpConnectionError,
    HttpStatusError,
    HttpTimeoutError,
)
from live_memory.providers.retry import DEFAULT_RETRY_POLICY, RetryPolicy, with_retries
from live_memory.providers.stream_tail import StreamTails
from live_memory.providers.types import (
    BearerTokenSource,
    ChatRequest,
    ChatResponse,
    StreamTap,
)

__all__ = ["AnthropicProvider", "MessagesParams", "build_messages_params"]
# MessagesParams and build_messages_params stay importable from here (bench/cache_share.py).

logger = logging.getLogger(__name__)


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
        # Told apart once: isinstance against a runtime-checkable Protocol costs ~35 us.
        source = self._token_source
        self._refreshing = source if isinstance(source, BearerTokenSource) else None
        self._token_fn = None if isinstance(source, BearerTokenSource) else source
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
        self._target = httpx2.URL(self._url)
        self._sent_headers: list[tuple[bytes, bytes]] = []
        self._client_loop: asyncio.AbstractEventLoop | None = None
        self._tails = StreamTails()

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

        source = self._refreshing
        if source is not None:
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
            message = await send(self._token_fn() if self._token_fn is not None else None)
        return parse_message(message, request.model, self._base_url)

    async def _post(
        self,
        client: httpx2.AsyncClient,
        body: bytes,
        headers: Mapping[str, str] | None,
        deadline: float | None,
        tap: StreamTap | None,
    ) -> dict[str, Any]:
        """One streamed attempt: the reply put back together, or an http_errors exception
        (ValueError for a body that is not a reply). The stream's tail is read after the
        reply is returned (stream_tail); leaving early closes the connection."""
        await self._tails.settled()  # the last call's connection is back in the pool
        http_request = self._request(client, body, headers, deadline)
        try:
            response = await client.send(http_request, stream=True)
            close = True
            try:
                if not response.is_success:
                    await response.aread()
                    raise HttpStatusError(response)
                lines = event_lines(response.aiter_bytes(), constants.STREAM_LINE_MAX_BYTES)
                message = await assemble_stream(lines, tap)
                self._tails.defer(response, lines)
                close = False
                return message
            except StreamError as exc:
                status = _STREAM_ERROR_STATUS.get(exc.kind, 400)
                error = {"type": "error", "error": {"type": exc.kind, "message": exc.message}}
                raise HttpStatusError(response, status=status, body=error) from exc
            finally:
                if close:
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
            # What build_request would merge in on every call (the client's headers, ours,
            # Host), worked out once: only the length and a token's authorization vary.
            template = self._client.build_request("POST", self._url)
            self._target = template.url
            self._sent_headers = [
                (k, v) for k, v in template.headers.raw if k.lower() != b"content-length"
            ]
        return self._client

    def _request(
        self,
        client: httpx2.AsyncClient,
        body: bytes,
        headers: Mapping[str, str] | None,
        deadline: float | None,
    ) -> httpx2.Request:
        """The call's request, built as `client.build_request` builds it (the same headers in
        the same order) without its per-call URL parsing and header merging, a tenth of a
        call's CPU. Proxies, pooling and the rest are still the client's, in `send`."""
        sent = self._sent_headers
        if headers:  # as Headers.update merges: an existing name keeps its place
            sent = list(sent)
            for name, value in headers.items():
                key, raw = name.lower().encode(), (name.encode(), value.encode())
                at = next((i for i, (k, _) in enumerate(sent) if k.lower() == key), None)
                if at is None:
                    sent.append(raw)
                else:
                    sent[at] = raw
        sent = [*sent, (b"Content-Length", str(len(body)).encode())]
        request = httpx2.Request(
            "POST",
            self._target,
            headers=sent,
            stream=httpx2.ByteStream(body),
            extensions={"timeout": _attempt_timeout(deadline)},
        )
        if client.cookies:  # what the API set (its edge's cookies) goes back, as before
            client.cookies.set_cookie_header(request)
        return request

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None and self._client_loop is asyncio.get_running_loop():
            await self._tails.settled()
            await client.aclose()


def _attempt_timeout(deadline: float | None) -> dict[str, float]:
    """The attempt's timeouts as the transport reads them (`httpx2.Timeout.as_dict()`)."""
    total = constants.PROVIDER_DEFAULT_TIMEOUT_S
    if deadline is not None:
        total = max(constants.MIN_CALL_TIMEOUT_S, deadline - time.monotonic())
    connect = min(constants.PROVIDER_CONNECT_TIMEOUT_S, total)
    return {"connect": connect, "read": total, "write": total, "pool": total}


def _normalise_base_url(base_url: str) -> str:
    # The SDK appends /v1/messages itself; a pasted ".../v1" would double it.
    url = base_url.rstrip("/")
    if url.endswith("/v1"):
        url = url[: -len("/v1")]
    return url
