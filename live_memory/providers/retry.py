"""Retrying provider calls, and turning the SDKs' exceptions into our error tree.

The SDKs run with `max_retries=0`; this module owns the policy instead, so it can honour the
question's deadline and name the provider, status and endpoint in every error:

    429, 408, 409, 5xx (529 overloaded), timeouts, refused connections  → retried with backoff
    an `error` event inside a 200 stream    → the status its type stands for, as above
    400/413 saying the prompt is too long                               → PromptTooLong
    401/403                                                             → ProviderAuthError
    a body the SDK cannot read                                          → ProviderBadResponse
    anything else, or retries exhausted                                 → ProviderError

Messages never contain the API key: known secrets and key-shaped strings are redacted.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import random
import re
import sys
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx2

from live_memory.config import constants
from live_memory.errors import (
    PromptTooLong,
    ProviderAuthError,
    ProviderBadResponse,
    ProviderError,
)

__all__ = ["DEFAULT_RETRY_POLICY", "RetryPolicy", "attempt_timeout", "redact", "with_retries"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

_RETRYABLE_STATUS = frozenset({408, 409, 429})
_TOO_LONG = re.compile(
    r"prompt is too long|context.length|maximum context|context_length_exceeded"
    r"|exceeds? (the )?(available )?context",
    re.IGNORECASE,
)
_KEY_SHAPED = re.compile(r"\b(sk-[A-Za-z0-9_-]{3})[A-Za-z0-9_-]{6,}")
_BEARER = re.compile(r"(Bearer\s+)\S+", re.IGNORECASE)
_SDK_BASES = {"anthropic": "AnthropicError", "openai": "OpenAIError"}
# An `error` event after the 200 (the API's error types) as the status it would have had, so an
# overloaded stream is retried like an overloaded answer.
_STREAM_ERROR_STATUS: Mapping[str, int] = {
    "overloaded_error": 529,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
}


def _sdk_errors(name: str) -> tuple[type[BaseException], ...]:
    """`name` (e.g. APIStatusError) from each SDK already imported.

    The SDKs take seconds to import, so only the adapters import them; an SDK nobody
    imported cannot have raised anything.
    """
    found = []
    for module, base in _SDK_BASES.items():
        sdk = sys.modules.get(module)
        if sdk is not None:
            found.append(getattr(sdk, base if name == "base" else name))
    return tuple(found)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How hard to retry a failing provider call."""

    retries: int = constants.PROVIDER_MAX_RETRIES
    """Retries after the first attempt: at most `retries + 1` calls."""
    base_delay_s: float = constants.RETRY_BASE_DELAY_S
    """Delay before the first retry; it doubles on each further retry."""
    max_delay_s: float = constants.RETRY_MAX_DELAY_S
    jitter: float = constants.RETRY_JITTER
    """Each backoff delay is scaled by a random factor in [1 - jitter, 1 + jitter]."""
    max_retry_after_s: float = constants.RETRY_AFTER_MAX_S
    """A server's `retry-after` is honoured up to this many seconds."""

    def backoff_s(self, retry_index: int, rng: Callable[[], float] = random.random) -> float:
        """The delay before retry number `retry_index` (0-based) when the server gave none."""
        delay = min(self.max_delay_s, self.base_delay_s * (2.0**retry_index))
        return max(0.0, delay * (1.0 + self.jitter * (2.0 * rng() - 1.0)))


DEFAULT_RETRY_POLICY = RetryPolicy()


@dataclass(frozen=True, slots=True)
class _Failure:
    error: ProviderError
    retryable: bool
    retry_after_s: float | None = None


async def with_retries(
    call: Callable[[], Awaitable[T]],
    *,
    provider: str,
    endpoint: str,
    policy: RetryPolicy = DEFAULT_RETRY_POLICY,
    deadline: float | None = None,
    secrets: Sequence[str] = (),
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> T:
    """Await `call()`, retrying transient failures; `deadline` is a `time.monotonic()` value.

    Raises PromptTooLong, ProviderAuthError, ProviderBadResponse or ProviderError; a
    ProviderError raised by `call` itself passes through untouched.
    """
    retry_index = 0
    while True:
        try:
            return await call()
        except ProviderError:
            raise
        # ValueError covers json decoding and pydantic validation of a body the SDK could
        # not read.
        except Exception as exc:
            if not isinstance(exc, (*_sdk_errors("base"), ValueError)):
                raise
            failure = _classify(exc, provider=provider, endpoint=endpoint, secrets=secrets)
            if not failure.retryable:
                raise failure.error from exc
            if retry_index >= policy.retries:
                raise _exhausted(failure.error, retry_index + 1) from exc
            delay = failure.retry_after_s
            if delay is None:
                delay = policy.backoff_s(retry_index)
            else:
                delay = min(max(delay, 0.0), policy.max_retry_after_s)
            if deadline is not None and time.monotonic() + delay >= deadline:
                raise type(failure.error)(
                    f"{failure.error} (no time left to retry before the deadline)"
                ) from exc
            retry_index += 1
            logger.warning(
                "retrying in %.2fs (retry %d of %d): %s",
                delay,
                retry_index,
                policy.retries,
                failure.error,
            )
            await sleep(delay)


def _classify(
    exc: BaseException, *, provider: str, endpoint: str, secrets: Sequence[str] = ()
) -> _Failure:
    """Map one SDK exception to our error tree and say whether retrying could help."""
    url = _url_of(exc) or endpoint
    if isinstance(exc, _sdk_errors("APIStatusError")):
        api: Any = exc  # an SDK APIStatusError (typed loosely: the SDKs load lazily)
        kind, detail = _api_error(api.body, api.message)
        status = api.status_code
        if status < 400:  # an `error` event inside a streamed 200
            status = _STREAM_ERROR_STATUS.get(kind, 400)
        detail = redact(detail, secrets)
        where = f"{provider} answered HTTP {status}{f' {kind}' if kind else ''} at {url}"
        if status in (400, 413) and (status == 413 or _TOO_LONG.search(detail)):
            return _Failure(
                PromptTooLong(f"{where}, refusing the prompt as too long: {detail}"), False
            )
        if status in (401, 403):
            hint = "check the API key or credential (LIVE_MEMORY_API_KEY)"
            return _Failure(ProviderAuthError(f"{where}: {detail}; {hint}"), False)
        retryable = status in _RETRYABLE_STATUS or status >= 500
        after = _retry_after_s(api.response.headers) if retryable else None
        return _Failure(ProviderError(f"{where}: {detail}"), retryable, after)
    if isinstance(exc, _sdk_errors("APITimeoutError")):
        return _Failure(ProviderError(f"{provider} did not answer in time at {url}"), True)
    if isinstance(exc, _sdk_errors("APIConnectionError")):
        cause = redact(str(exc.__cause__ or exc), secrets)
        return _Failure(ProviderError(f"could not connect to {provider} at {url}: {cause}"), True)
    detail = redact(str(exc), secrets)[:300]
    if isinstance(exc, (*_sdk_errors("APIResponseValidationError"), ValueError)):
        message = (
            f"{provider} at {url} answered something that is not a valid response "
            f"(is the base URL right?): {detail}"
        )
        return _Failure(ProviderBadResponse(message), False)
    return _Failure(ProviderError(f"{provider} call to {url} failed: {detail}"), False)


def attempt_timeout(deadline: float | None) -> httpx2.Timeout:
    """One attempt's timeouts: what is left before `deadline` (a `time.monotonic()` value),
    at least MIN_CALL_TIMEOUT_S; connecting at most PROVIDER_CONNECT_TIMEOUT_S of it."""
    total = constants.PROVIDER_DEFAULT_TIMEOUT_S
    if deadline is not None:
        total = max(constants.MIN_CALL_TIMEOUT_S, deadline - time.monotonic())
    return httpx2.Timeout(total, connect=min(constants.PROVIDER_CONNECT_TIMEOUT_S, total))


def redact(text: str, secrets: Sequence[str] = ()) -> str:
    """Remove credentials from a message: the given secrets, bearer values, `sk-…` keys."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    text = _BEARER.sub(r"\1***", text)
    return _KEY_SHAPED.sub(r"\1***", text)


def _exhausted(error: ProviderError, attempts: int) -> ProviderError:
    return type(error)(f"{error} (gave up after {attempts} attempts)")


def _api_error(body: object, fallback: str) -> tuple[str, str]:
    """(error type, human message) from either wire format's error body."""
    if isinstance(body, Mapping):
        err = body.get("error", body)
        if isinstance(err, Mapping):
            kind = err.get("type") or err.get("code") or ""
            message = err.get("message") or fallback
            return str(kind), str(message)
        if isinstance(err, str):
            return "", err
    if isinstance(body, str) and body:
        return "", body[:300]
    return "", fallback


def _url_of(exc: BaseException) -> str | None:
    """The request URL without credentials or query string."""
    request = getattr(exc, "request", None)
    if not isinstance(request, httpx2.Request):
        return None
    url = request.url
    port = f":{url.port}" if url.port else ""
    return f"{url.scheme}://{url.host}{port}{url.path}"


def _retry_after_s(headers: Mapping[str, str]) -> float | None:
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return float(raw_ms) / 1000.0
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return float(raw)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return when.timestamp() - time.time()
