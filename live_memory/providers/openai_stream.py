"""Putting a streamed chat completion back together, one `chat.completion.chunk` at a time.

Why stream at all: a local server with one slot keeps generating for a caller that gave up
unless the connection closes, and llama.cpp notices a closed connection only while it is
sending (a non-streamed request ran 858 s after its caller left). Streaming also gives the time
to the first token (our measure of prefill where the server sends no `timings`) and the partial
answer a soft deadline can keep.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from live_memory.providers.types import StreamTap

__all__ = ["StreamAssembly"]


@dataclass(slots=True)
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass(slots=True)
class StreamAssembly:
    """Accumulates chunks; `add` is called for each, in order."""

    started: float
    tap: StreamTap | None = None
    text: list[str] = field(default_factory=list)
    calls: dict[int, _PartialCall] = field(default_factory=dict)
    finish_reason: str | None = None
    usage: object | None = None
    timings: Mapping[str, object] | None = None
    model: str | None = None
    first_token_at: float | None = None
    pieces: int = 0
    """Content and tool-call deltas received (a server streams about one token per piece)."""

    chunks: int = 0

    def add(self, chunk: object, now: float) -> None:
        self.chunks += 1
        if self.model is None:
            self.model = getattr(chunk, "model", None) or None
        usage = getattr(chunk, "usage", None)
        if usage is not None:
            self.usage = usage
        extra: Mapping[str, object] = getattr(chunk, "model_extra", None) or {}
        timings = extra.get("timings")
        if isinstance(timings, dict):
            self.timings = timings
        for choice in getattr(chunk, "choices", None) or ():
            if getattr(choice, "finish_reason", None):
                self.finish_reason = str(choice.finish_reason)
            delta = getattr(choice, "delta", None)
            if delta is None:
                continue
            content = getattr(delta, "content", None)
            got = False
            if content:
                self.text.append(content)
                if self.tap is not None:
                    self.tap.add_text(content)
                got = True
            for item in getattr(delta, "tool_calls", None) or ():
                got = True
                self._add_call(item)
            if got:
                self.pieces += 1
                if self.first_token_at is None:
                    self.first_token_at = now
                    if self.tap is not None:
                        self.tap.first_token_s = now - self.started

    def _add_call(self, item: object) -> None:
        index = getattr(item, "index", None)
        key = index if isinstance(index, int) else len(self.calls)
        slot = self.calls.setdefault(key, _PartialCall())
        call_id = getattr(item, "id", None)
        if call_id:
            slot.id = str(call_id)
        function = getattr(item, "function", None)
        if function is not None:
            if getattr(function, "name", None):
                slot.name += str(function.name)
            if getattr(function, "arguments", None):
                slot.arguments.append(str(function.arguments))

    @property
    def answer_text(self) -> str:
        return "".join(self.text)

    def tool_calls(self) -> list[tuple[str, str, str]]:
        """(id, name, arguments JSON text) of each streamed call that has a name, in order."""
        return [
            (c.id or f"call_{i}", c.name, "".join(c.arguments))
            for i, c in sorted(self.calls.items())
            if c.name
        ]

    def first_token_s(self) -> float | None:
        return None if self.first_token_at is None else self.first_token_at - self.started
