from __future__ import annotations

import asyncio
import dataclasses
import socket

import pytest

from live_memory.errors import PromptTooLong, ProviderAuthError, ProviderBadResponse, ProviderError
from live_memory.providers import (
    AnthropicProvider,
    ChatRequest,
    ChatResponse,
    Message,
    OpenAIProvider,
    Provider,
    TextBlock,
)
from live_memory.providers.retry import RetryPolicy, redact
from tests.providers.conftest import SleepRecorder
from tests.support.fakes import Error, FakeProvider, Malformed, Text

REQUEST = ChatRequest(
    model="claude-haiku-4-5",
    system=(),
    messages=(Message("user", (TextBlock("q"),)),),
    tools=(),
    max_tokens=64,
)
SECRET = "sk-ant-api03-very-secret-key-material"


def make(wire: str, base_url: str, policy: RetryPolicy, sleep: SleepRecorder) -> Provider:
    if wire == "anthropic":
        return AnthropicProvider(base_url, SECRET, retry=policy, sleep=sleep)
    return OpenAIProvider(f"{base_url}/v1", SECRET, retry=policy, sleep=sleep)


def chat(provider: Provider, request: ChatRequest = REQUEST) -> ChatResponse:
    async def run() -> ChatResponse:
        try:
            return await provider.chat(request)
        finally:
            await provider.aclose()

    return asyncio.run(run())


WIRES = pytest.mark.parametrize("wire", ["anthropic", "openai"])


@WIRES
def test_rate_limited_call_is_retried_then_succeeds(
    wire: str, fake: FakeProvider, fast_retry: RetryPolicy, sleep: SleepRecorder
) -> None:
    fake.script(Error.rate_limited(), Text("finally"))

    response = chat(make(wire, fake.url, fast_retry, sleep))

    assert response.text == "finally"
    assert len(fake.requests) == 2
    assert sleep.delays == [fast_retry.base_delay_s]


@WIRES
def test_retry_after_header_is_honoured_up_to_the_cap(
    wire: str, fake: FakeProvider, fast_retry: RetryPolicy, sleep: SleepRecorder
) -> None:
    fake.script(
        Error.rate_limited(retry_after_s=2), Error.rate_limited(retry_after_s=9999), Text("ok")
    )
    policy = RetryPolicy(retries=2, base_delay_s=0.01, jitter=0.0, max_retry_after_s=5.0)

    chat(make(wire, fake.url, policy, sleep))

    assert sleep.delays == [2.0, 5.0]


@WIRES
def test_server_errors_exhaust_retries_then_name_provider_status_and_endpoint(
    wire: str, fake: FakeProvider, fast_retry: RetryPolicy, sleep: SleepRecorder
) -> None:
    fake.script(Error.server(), Error.overloaded(), Error.server())

    with pytest.raises(ProviderError) as caught:
        chat(make(wire, fake.url, fast_retry, sleep))

    message = str(caught.value)
    assert type(caught.value) is ProviderError
    assert wire in message
    assert "HTTP 500" in message
    assert fake.url in message
    assert "3 attempts" in message
    assert len(fake.requests) == 3
    assert sleep.delays == [0.01, 0.02]


@WIRES
def test_malformed_body_is_a_bad_response_without_retry(
    wire: str, fake: FakeProvider, fast_retry: RetryPolicy, sleep: SleepRecorder
) -> None:
    fake.script(Malformed(), Text("never reached"))

    with pytest.raises(ProviderBadResponse, match="not a valid response"):
        chat(make(wire, fake.url, fast_retry, sleep))

    assert len(fake.requests) == 1


@WIRES
def test_prompt_too_long_is_raised_without_retry(
    wire: str, fake: FakeProvider, fast_retry: RetryPolicy, sleep: SleepRecorder
) -> None:
    fake.script(Error.prompt_too_long(), Text("never reached"))

    with pytest.raises(PromptTooLong, match="too long"):
        chat(make(wire, fake.url, fast_retry, sleep))

    assert len(fake.requests) == 1
    assert sleep.delays == []


@WIRES
def test_refused_key_is_an_auth_error_that_never_shows_the_key(
    wire: str, fast_retry: RetryPolicy, sleep: SleepRecorder
) -> None:
    with FakeProvider(require_key="the-right-key") as strict:
        with pytest.raises(ProviderAuthError) as caught:
            chat(make(wire, strict.url, fast_retry, sleep))
        assert len(strict.requests) == 1

    assert "HTTP 401" in str(caught.value)
    assert SECRET not in str(caught.value)
    assert "very-secret" not in repr(caught.value)


@WIRES
def test_refused_connection_is_retried_then_a_provider_error(
    wire: str, fast_retry: RetryPolicy, sleep: SleepRecorder
) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # nothing listens here once the socket closes

    with pytest.raises(ProviderError, match="could not connect") as caught:
        chat(make(wire, f"http://127.0.0.1:{port}", fast_retry, sleep))

    assert f"127.0.0.1:{port}" in str(caught.value)
    assert len(sleep.delays) == fast_retry.retries


def test_slow_answer_past_the_deadline_is_a_provider_error(
    fake: FakeProvider, fast_retry: RetryPolicy, sleep: SleepRecorder
) -> None:
    fake.script(Text("too late", delay_s=3.0))
    request = dataclasses.replace(REQUEST, timeout_s=1.0)

    with pytest.raises(ProviderError, match="did not answer in time"):
        chat(make("anthropic", fake.url, fast_retry, sleep), request)

    assert sleep.delays == []  # no time left for a retry


def test_backoff_doubles_up_to_the_cap_within_the_jitter() -> None:
    policy = RetryPolicy(base_delay_s=0.5, max_delay_s=3.0, jitter=0.25)

    assert [policy.backoff_s(i, rng=lambda: 0.5) for i in range(4)] == [0.5, 1.0, 2.0, 3.0]
    assert policy.backoff_s(0, rng=lambda: 0.0) == pytest.approx(0.375)
    assert policy.backoff_s(0, rng=lambda: 1.0) == pytest.approx(0.625)


def test_redact_removes_known_secrets_bearer_values_and_key_shaped_strings() -> None:
    text = f"key {SECRET} header Bearer abc.def other sk-proj-0123456789abcdef"

    cleaned = redact(text, [SECRET])

    assert SECRET not in cleaned
    assert "abc.def" not in cleaned
    assert "0123456789abcdef" not in cleaned
    assert "Bearer ***" in cleaned
