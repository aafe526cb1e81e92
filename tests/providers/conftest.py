"""One fake provider and one fake OAuth token endpoint per session, reset around every test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from live_memory.providers.retry import RetryPolicy
from tests.support.fakes import FakeProvider, FakeTokenEndpoint


class SleepRecorder:
    """Stands in for `asyncio.sleep` in retry loops: records the delay, returns at once."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


@pytest.fixture(scope="session")
def fake_server() -> Iterator[FakeProvider]:
    with FakeProvider() as fake:
        yield fake


@pytest.fixture
def fake(fake_server: FakeProvider) -> Iterator[FakeProvider]:
    fake_server.reset()
    yield fake_server
    fake_server.reset()


@pytest.fixture
def sleep() -> SleepRecorder:
    return SleepRecorder()


@pytest.fixture
def fast_retry() -> RetryPolicy:
    return RetryPolicy(retries=2, base_delay_s=0.01, max_delay_s=0.04, jitter=0.0)


@pytest.fixture(scope="session")
def endpoint_server() -> Iterator[FakeTokenEndpoint]:
    with FakeTokenEndpoint(expires_in=3600) as fake:
        yield fake


@pytest.fixture
def endpoint(endpoint_server: FakeTokenEndpoint) -> Iterator[FakeTokenEndpoint]:
    """The fake token endpoint, answering `fake-access-N` tokens valid for an hour."""
    endpoint_server.reset()
    yield endpoint_server
    endpoint_server.reset()
