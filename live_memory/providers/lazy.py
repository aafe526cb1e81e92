"""A provider whose SDK-backed adapter is built on first use.

The SDKs take seconds and tens of megabytes to import; a server that has not been asked
anything yet (or only receives file notifications) should pay neither.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

from live_memory.providers.types import ChatRequest, ChatResponse, Provider

__all__ = ["LazyProvider"]


class LazyProvider:
    """Implements Provider; the real adapter is built (off the event loop) on first chat."""

    def __init__(self, name: str, endpoint: str, build: Callable[[], Provider]) -> None:
        self._name = name
        self._endpoint = endpoint
        self._build = build
        self._real: Provider | None = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self._name

    @property
    def endpoint(self) -> str:
        return self._real.endpoint if self._real is not None else self._endpoint

    def _ensure(self) -> Provider:
        with self._lock:  # one build even when the first questions arrive together
            if self._real is None:
                self._real = self._build()
            return self._real

    async def chat(self, request: ChatRequest) -> ChatResponse:
        real = self._real
        if real is None:
            real = await asyncio.to_thread(self._ensure)
        return await real.chat(request)

    async def aclose(self) -> None:
        if self._real is not None:
            await self._real.aclose()
