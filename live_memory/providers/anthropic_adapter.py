"""The Anthropic Messages adapter on the `anthropic` SDK: neutral ChatRequest ⇄ `messages.stream`.

The client is the SDK's, chosen by platform: `AsyncAnthropic` for Anthropic's API or a gateway,
`AsyncAnthropicBedrock` (AWS SigV4 through boto3: the `bedrock` extra) or `AsyncAnthropicVertex`
(Google credentials through google-auth: the `vertex` extra) where Claude Code's
CLAUDE_CODE_USE_BEDROCK / CLAUDE_CODE_USE_VERTEX chose a cloud. One client per event loop (its
connection pool is bound to the loop).

The SDK's own retries are off (`max_retries=0`): `retry` owns the policy, so it honours the
question's deadline and names provider, status and endpoint; each attempt's timeout is what is
left of the deadline. Streamed, so that giving up (a deadline, a cancelled question) closes the
connection and the server stops generating, and so the tap sees the text as it comes. What
follows `message_stop` is read off the answer's path (stream_tail), keeping the connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal, cast

import anthropic
import httpx2
import orjson
from anthropic.types import Message as SdkMessage

from live_memory.config import constants
from live_memory.errors import ProviderAuthError
from live_memory.providers.anthropic_messages import (
    MessagesParams,
    build_messages_params,
    parse_message,
)
from live_memory.providers.retry import (
    DEFAULT_RETRY_POLICY,
    RetryPolicy,
    attempt_timeout,
    with_retries,
)
from live_memory.providers.stream_tail import StreamTails
from live_memory.providers.types import (
    BearerTokenSource,
    ChatRequest,
    ChatResponse,
    StreamTap,
)

if TYPE_CHECKING:
    from anthropic.lib.streaming import AsyncMessageStream

__all__ = ["AnthropicProvider", "MessagesParams", "Platform", "build_messages_params"]
# MessagesParams and build_messages_params stay importable from here (bench/cache_share.py).

logger = logging.getLogger(__name__)

Platform = Literal["anthropic", "bedrock", "vertex"]
Client = anthropic.AsyncAnthropic | anthropic.AsyncAnthropicBedrock | anthropic.AsyncAnthropicVertex

_CLOUD_CREDENTIAL_HINT: Mapping[str, str] = {
    "bedrock": "set AWS_PROFILE or AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, or "
    "AWS_BEARER_TOKEN_BEDROCK, as for Claude Code",
    "vertex": "run `gcloud auth application-default login` or set "
    "GOOGLE_APPLICATION_CREDENTIALS, as for Claude Code",
}
# Where the cloud SDKs' credential failures come from (boto3's chain, google-auth's ADC); the
# anthropic SDK lets them through as they are.
_CLOUD_AUTH_MODULES = ("botocore", "boto3", "google.auth", "google.oauth2")


class AnthropicProvider:
    """A Provider speaking the Anthropic Messages API through the `anthropic` SDK.

    Pass `api_key` for a console key, or `auth_token` for an OAuth bearer token — a string, a
    callable, or a `BearerTokenSource`, asked before every call so a refreshed token is picked
    up. A source's token refused with 401 is invalidated and the call tried once more with the
    next one. `platform` "bedrock" takes `region`, `aws_profile` and `api_key` (a Bedrock API
    key); "vertex" takes `region`, `project_id` and, instead of Google's default credentials,
    `auth_token` (an access token) or `google_credentials`. Only what is given is sent: the
    SDK never falls back to credentials of the environment. Call `aclose()` on the loop that
    made the calls before it ends.
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
        platform: Platform = "anthropic",
        region: str | None = None,
        project_id: str | None = None,
        aws_profile: str | None = None,
        google_credentials: object = None,
    ) -> None:
        self._base_url = _normalise_base_url(base_url) if platform == "anthropic" else base_url
        self._url = f"{self._base_url}/v1/messages" if platform == "anthropic" else self._base_url
        self._platform = platform
        self._retry = retry
        self._sleep = sleep
        source = None if isinstance(auth_token, str) else auth_token
        # Told apart once: isinstance against a runtime-checkable Protocol costs ~35 us.
        self._refreshing = source if isinstance(source, BearerTokenSource) else None
        self._token_fn = None if isinstance(source, BearerTokenSource) else source
        token = auth_token if isinstance(auth_token, str) and auth_token else None
        self._secrets = tuple(s for s in (api_key, token) if s)
        timeout = httpx2.Timeout(
            constants.PROVIDER_DEFAULT_TIMEOUT_S, connect=constants.PROVIDER_CONNECT_TIMEOUT_S
        )
        common: dict[str, Any] = {
            "base_url": self._base_url,
            "max_retries": 0,
            "timeout": timeout,
            "default_headers": dict(default_headers or {}),
        }
        self._make: Callable[[str | None], Client]
        if platform == "bedrock":
            self._make = lambda _token: anthropic.AsyncAnthropicBedrock(
                aws_region=region, aws_profile=aws_profile, api_key=api_key, **common
            )
        elif platform == "vertex":
            self._make = lambda _token: anthropic.AsyncAnthropicVertex(
                region=region or "",
                project_id=project_id or "",
                access_token=token,
                credentials=cast("Any", google_credentials),
                **common,
            )
        else:
            static = token or (api_key if source is None else None)
            if not static and source is None:
                # A gateway without auth: an explicit empty credential keeps the SDK from
                # reading the environment or a profile, and the omitted header sends none.
                common["default_headers"]["Authorization"] = anthropic.omit
            self._make = lambda per_call: anthropic.AsyncAnthropic(
                auth_token=per_call or static or "", **common
            )
        self._client: Client | None = None
        self._client_loop: asyncio.AbstractEventLoop | None = None
        self._client_token: str | None = None
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
        params = build_messages_params(request)
        deadline = None if request.timeout_s is None else time.monotonic() + request.timeout_s

        async def send(token: str | None) -> tuple[SdkMessage, dict[int, object]]:
            client = self._client_for_this_loop(token)

            async def call() -> tuple[SdkMessage, dict[int, object]]:
                return await self._stream(client, params, deadline, request.tap)

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
                message, inputs = await send(token)
            except ProviderAuthError as exc:
                # 401: revoked by a refresh elsewhere, or expired early; one more try. A 403
                # (no access to this model) would fail with any token: no refresh for it.
                if getattr(exc.__cause__, "status_code", None) != 401:
                    raise
                source.invalidate(token)
                retry_token = await source.token()
                if retry_token == token:
                    raise
                message, inputs = await send(retry_token)
        else:
            message, inputs = await send(self._token_fn() if self._token_fn is not None else None)
        return parse_message(message, inputs, request.model, self._base_url)

    async def _stream(
        self,
        client: Client,
        params: MessagesParams,
        deadline: float | None,
        tap: StreamTap | None,
    ) -> tuple[SdkMessage, dict[int, object]]:
        """One streamed attempt: the reply and each tool call's input by block index. SDK
        exceptions pass to the retry layer; ValueError for a stream that is not a reply."""
        await self._tails.settled()  # the last call's connection is back in the pool
        stack = contextlib.AsyncExitStack()
        handed_over = False
        try:
            # Our TypedDicts carry the same JSON as the SDK's (cache_control on any block).
            body = cast("dict[str, Any]", params)
            manager = client.messages.stream(**body, timeout=attempt_timeout(deadline))
            stream = await stack.enter_async_context(manager)
            reply = await _read_reply(stream, tap)
            self._tails.defer(stream, stack.aclose)
            handed_over = True
            return reply
        except Exception as exc:
            problem = self._cloud_auth_problem(exc)
            if problem is not None:
                raise ProviderAuthError(problem) from exc
            raise
        finally:
            if not handed_over:
                await stack.aclose()  # leaving early (failed, cancelled) closes the connection

    def _cloud_auth_problem(self, exc: Exception) -> str | None:
        # boto3 / google-auth finding no usable credential, or the SDK saying so.
        module = type(exc).__module__
        if self._platform == "anthropic" or not (
            module.startswith(_CLOUD_AUTH_MODULES) or type(exc) is RuntimeError
        ):
            return None
        hint = _CLOUD_CREDENTIAL_HINT[self._platform]
        return f"anthropic on {self._platform} has no usable credential ({exc}); {hint}"

    def _client_for_this_loop(self, token: str | None) -> Client:
        # The server makes every call on its one I/O loop. A caller that runs each call in a
        # fresh loop (asyncio.run) gets a fresh client: a connection pool is bound to its loop.
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            self._client, self._client_loop = self._make(token), loop
            self._client_token = token
        elif token is not None and token != self._client_token:
            # A refreshed token: a copy that shares the connection pool.
            self._client = self._client.with_options(auth_token=token)  # type: ignore[call-arg]
            self._client_token = token
        return self._client

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None and self._client_loop is asyncio.get_running_loop():
            await self._tails.settled()
            await client.close()


async def _read_reply(
    stream: AsyncMessageStream[Any], tap: StreamTap | None
) -> tuple[SdkMessage, dict[int, object]]:
    """Read `stream` up to its `message_stop`: the reply, and each tool call's input decoded
    from its whole JSON (a call cut off by max_tokens gets `{}`, not a partial guess)."""
    if tap is not None:
        tap.reset()  # a retried attempt starts its answer afresh
    started = time.monotonic()
    parts: dict[int, list[str]] = {}
    begun = False
    message: SdkMessage | None = None
    while (event := await anext(stream, None)) is not None:
        if event.type == "message_start":
            begun = True
        elif event.type == "content_block_delta":
            delta = event.delta
            if delta.type == "text_delta" and tap is not None and delta.text:
                if tap.first_token_s is None:
                    tap.first_token_s = time.monotonic() - started
                tap.add_text(delta.text)
            elif delta.type == "input_json_delta":
                parts.setdefault(event.index, []).append(delta.partial_json)
        elif event.type == "message_stop":
            message = event.message
            break
    if message is None:
        if not begun:
            # ValueError: the retry layer reports a bad response, not retried.
            raise ValueError("the stream carried no message")
        message = stream.current_message_snapshot  # ended without message_stop
    inputs: dict[int, object] = {}
    for index, chunks in parts.items():
        try:
            inputs[index] = orjson.loads("".join(chunks) or "{}")
        except orjson.JSONDecodeError:
            inputs[index] = {}
    return message, inputs


def _normalise_base_url(base_url: str) -> str:
    # The SDK appends /v1/messages itself; a pasted ".../v1" would double it.
    url = base_url.rstrip("/")
    if url.endswith("/v1"):
        url = url[: -len("/v1")]
    return url
