"""The prompt layout as data: the KV-cache contract of ARCHITECTURE.md.

    [ system prompt + directory tree ]        stable; breakpoint 1
    [ frozen volatile block ]                 byte-identical between compactions; breakpoint 2
    [ history: Q/A + observation deltas ]     append-only between compactions; breakpoint 3
    [ trailing turn: hints + question ]       never cached
    [ this question's tool loop ]             breakpoint 4 on its latest message

Every request (answers, retries, keep-warm pings) is built here, so they share one prefix.
A breakpoint is placed only where the estimated prompt up to it reaches the model's minimum
cacheable size: a short stable prefix gets no marker, yet the history's marker is still placed
once the conversation has grown past the minimum.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace

import orjson

from live_memory.memory.window import Window
from live_memory.providers import CacheTtl, ChatRequest, Message, SystemBlock, TextBlock, ToolSpec

__all__ = [
    "Hints",
    "PrefixSizes",
    "build_request",
    "prefix_chars",
    "render_trailing_turn",
    "stable_prefix_text",
]


@dataclass(frozen=True, slots=True)
class Hints:
    """Per-question volatile hints, placed only on the trailing turn."""

    time_budget_s: float
    answer_budget_tokens: int
    recently_modified: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class PrefixSizes:
    """How much of the prompt precedes each cache breakpoint (tool definitions included)."""

    stable: int
    through_frozen: int
    through_history: int

    def in_tokens(self, chars_per_token: float) -> PrefixSizes:
        """These sizes, given in characters, as estimated tokens."""
        return PrefixSizes(
            *(
                int(n / chars_per_token)
                for n in (self.stable, self.through_frozen, self.through_history)
            )
        )


def prefix_chars(window: Window, tools: Sequence[ToolSpec], stable_text: str) -> PrefixSizes:
    """Characters through the stable text, the frozen block and the history."""
    stable = _tools_chars(tools) + len(stable_text)
    frozen = stable + len(window.frozen or "")
    return PrefixSizes(stable, frozen, frozen + sum(len(t.text) for t in window.history))


def _tools_chars(tools: Sequence[ToolSpec]) -> int:
    # Shallow dicts, not dataclasses.asdict: asdict deep-copies every schema, and this runs
    # for every request (2 ms of CPU per request on a loaded machine, 15 % of a question).
    specs = [
        {"name": t.name, "description": t.description, "input_schema": dict(t.input_schema)}
        for t in tools
    ]
    return len(orjson.dumps(specs))


def _message_chars(message: Message) -> int:
    return len(orjson.dumps([asdict(block) for block in message.blocks]))


def stable_prefix_text(system_prompt: str, tree: str) -> str:
    return f"{system_prompt}\n\n## Directory tree of the workspace\n{tree or '(empty)'}"


def render_trailing_turn(question: str, hints: Hints) -> str:
    lines = [
        f"[time budget: about {hints.time_budget_s:.0f} s for this whole answer, tools included;"
        f" at most {hints.answer_budget_tokens} answer tokens]",
    ]
    if hints.recently_modified:
        lines.append(
            "[recently modified by the coding agent since you last saw them: "
            + ", ".join(hints.recently_modified)
            + "]"
        )
    return "\n".join(lines) + f"\n\nQuestion: {question}"


def build_request(
    window: Window,
    *,
    system_prompt: str,
    trailing: str | None,
    loop: Sequence[Message] = (),
    tools: tuple[ToolSpec, ...],
    model: str,
    max_tokens: int,
    cache_key: str | None = None,
    timeout_s: float | None = None,
    force_tool: bool = False,
    cache_ttl: CacheTtl | None = None,
    min_cache_tokens: int = 0,
) -> ChatRequest:
    """One request in the cache-stable layout. `trailing=None` builds a keep-warm ping.

    A cache marker is placed only where the estimated prompt through it reaches
    `min_cache_tokens` (the model's minimum cacheable size: a marker below it caches nothing).
    The bytes and their order are the same either way.
    """
    if window.frozen is None:
        window.freeze()
    assert window.frozen is not None

    def cacheable(prefix_chars: int) -> bool:
        return prefix_chars / window.chars_per_token >= min_cache_tokens

    stable_text = stable_prefix_text(system_prompt, window.tree)
    ends = prefix_chars(window, tools, stable_text)
    system = (
        SystemBlock(stable_text, cache_breakpoint=cacheable(ends.stable)),
        SystemBlock(window.frozen, cache_breakpoint=cacheable(ends.through_frozen)),
    )
    history = [Message(t.role, (TextBlock(t.text),)) for t in window.history]
    if history and cacheable(ends.through_history):
        history[-1] = replace(history[-1], cache_breakpoint=True)
    messages = list(history)
    if trailing is not None:
        messages.append(Message("user", (TextBlock(trailing),)))
    elif not messages or messages[-1].role != "user":
        # A ping must end on a user turn; the fixed text keeps pings byte-identical.
        messages.append(Message("user", (TextBlock("(keep-warm ping: reply with one word)"),)))
    if loop:
        *head, last = loop
        loop_end = ends.through_history + len(trailing or "") + sum(_message_chars(m) for m in loop)
        messages += [*head, replace(last, cache_breakpoint=cacheable(loop_end))]
    return ChatRequest(
        model=model,
        system=system,
        messages=tuple(messages),
        tools=tools,
        max_tokens=max_tokens,
        cache_key=cache_key,
        timeout_s=timeout_s,
        tool_choice="any" if force_tool else "auto",
        cache_ttl=cache_ttl,
    )
