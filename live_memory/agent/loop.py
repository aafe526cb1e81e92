"""The agent loop: one question, answered with read-only tools, within its budgets.

Stop reasons are explicit: `answered`, `max_iterations`, `timed_out`, `max_tokens`.
Tool failures are results the model sees, never loop-enders.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

from live_memory.agent.prompt import COLD_MEMORY_NUDGE, FINAL_ANSWER_NUDGE
from live_memory.config import constants as C
from live_memory.memory import Window, build_request
from live_memory.providers import (
    CacheTtl,
    CallTimings,
    ChatRequest,
    ChatResponse,
    Message,
    Provider,
    StreamTap,
    TextBlock,
    ToolResultBlock,
    Usage,
)
from live_memory.tools import FileRead, Toolbox, ToolOutcome

__all__ = ["LoopLimits", "LoopResult", "StopReason", "run_agent_loop"]

logger = logging.getLogger(__name__)

StopReason = Literal["answered", "max_iterations", "timed_out", "max_tokens"]


@dataclass(frozen=True, slots=True)
class LoopLimits:
    soft_deadline: float
    """Monotonic time by which a (best-effort) answer must be returned."""
    max_answer_tokens: int
    max_iterations: int = C.MAX_AGENT_ITERATIONS
    tool_result_token_budget: int = C.QUESTION_TOOL_RESULT_TOKEN_BUDGET
    cold_guard: bool = True
    grounded: bool = False
    """The retrieval delta already names where the question's subject is defined (the
    symbol index covers it): the memory is not cold for this question."""
    cache_ttl: CacheTtl | None = None
    cache_min_tokens: int = 0


@dataclass(slots=True)
class LoopResult:
    answer: str = ""
    stop_reason: StopReason = "answered"
    usage: Usage = field(default_factory=Usage)
    usage_by_call: list[Usage] = field(default_factory=list)
    tool_calls: int = 0
    reads: list[FileRead] = field(default_factory=list)
    iterations: int = 0
    model: str = ""
    provider_s: float = 0.0
    """Wall time spent waiting on the provider (the rest is our own overhead)."""
    timings: list[CallTimings] = field(default_factory=list)
    """Each finished call's timings (the endpoint's measured speed is learnt from them)."""

    @property
    def timed_out(self) -> bool:
        return self.stop_reason == "timed_out"

    @property
    def files_read(self) -> int:
        return len({r.path for r in self.reads})


def _is_cold(window: Window) -> bool:
    has_content = any(f.content for f in window.files.values())
    ledger_chars = sum(len(f.text) for f in window.ledger)
    return not has_content and ledger_chars < C.COLD_LEDGER_MAX_CHARS


def _request_chars(request: ChatRequest) -> int:
    """Characters of everything the provider bills as prompt (for calibration)."""
    chars = sum(len(b.text) for b in request.system)
    for message in request.messages:
        for block in message.blocks:
            if isinstance(block, TextBlock):
                chars += len(block.text)
            elif isinstance(block, ToolResultBlock):
                chars += len(block.content)
            else:
                chars += len(block.name) + len(json.dumps(block.arguments))
    return chars


def _with_user_text(loop: list[Message], text: str) -> None:
    """Add a user instruction without two user turns in a row (after tool results)."""
    if loop and loop[-1].role == "user":
        last = loop[-1]
        loop[-1] = Message("user", (*last.blocks, TextBlock(text)))
    else:
        loop.append(Message("user", (TextBlock(text),)))


async def run_agent_loop(
    provider: Provider,
    window: Window,
    question_turn: str,
    *,
    toolbox: Toolbox,
    model: str,
    system_prompt: str,
    limits: LoopLimits,
    cache_key: str | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> LoopResult:
    """Run one question on `window` (a private copy; calibration is its only mutation).

    Raises ProviderError (PromptTooLong included) when the provider fails after retries.
    """
    result = LoopResult(model=model)
    loop: list[Message] = []
    tools = toolbox.specs()
    cold = limits.cold_guard and not limits.grounded and _is_cold(window)
    tool_tokens = 0
    last_text = ""
    force_tool = False

    while True:
        remaining = limits.soft_deadline - clock()
        if remaining <= 0:
            result.stop_reason = "timed_out"
            break
        final_turn = result.iterations >= limits.max_iterations
        if final_turn:
            _with_user_text(loop, FINAL_ANSWER_NUDGE)
        request = build_request(
            window,
            system_prompt=system_prompt,
            trailing=question_turn,
            loop=loop,
            tools=tools,
            model=model,
            max_tokens=limits.max_answer_tokens,
            cache_key=cache_key,
            timeout_s=max(remaining, C.MIN_CALL_TIMEOUT_S),
            force_tool=force_tool,
            cache_ttl=limits.cache_ttl,
            min_cache_tokens=limits.cache_min_tokens,
        )
        tap = StreamTap()
        request = replace(request, tap=tap)
        force_tool = False
        called = clock()
        try:
            response: ChatResponse = await asyncio.wait_for(provider.chat(request), remaining)
        except TimeoutError:
            # The cancelled call closed its stream (the server stops); keep what it said.
            last_text = _partial_answer(tap.text) or last_text
            result.stop_reason = "timed_out"
            break
        finally:
            result.provider_s += clock() - called
        result.iterations += 1
        result.usage += response.usage
        result.usage_by_call.append(response.usage)
        if response.timings is not None:
            result.timings.append(response.timings)
        if not response.usage_estimated:
            window.calibrate(_request_chars(request), response.usage.input_tokens)
        if response.text.strip():
            last_text = response.text.strip()
        calls = response.tool_calls
        if final_turn or not calls:
            if not calls and cold and result.tool_calls == 0 and not final_turn:
                # Reject an ungrounded first answer once and force one tool call (Grep/Read),
                # so a cold cheap model grounds instead of confabulating; then trust it.
                cold, force_tool = False, True
                loop += [
                    Message("assistant", response.blocks or (TextBlock("(no answer)"),)),
                    Message("user", (TextBlock(COLD_MEMORY_NUDGE),)),
                ]
                continue
            result.answer = response.text.strip()
            if final_turn and calls:
                result.stop_reason = "max_iterations"
            elif response.stop_reason == "max_tokens":
                result.stop_reason = "max_tokens"
            if final_turn and not result.answer:
                result.stop_reason = "max_iterations"
            break
        loop.append(Message("assistant", response.blocks))
        results = []
        for call in calls:
            # The deadline holds between tool calls too: one turn may ask for many slow
            # reads, and the best-effort answer is due at the soft deadline, not after them.
            outcome = await _run_tool(toolbox, call.name, call.arguments, limits, clock)
            if outcome is None:
                results.append(ToolResultBlock(call.id, _SKIPPED, True))
                continue
            result.tool_calls += 1
            text = outcome.text
            cost = int(len(text) / window.chars_per_token)
            if tool_tokens + cost > limits.tool_result_token_budget:
                room = max(limits.tool_result_token_budget - tool_tokens, 0)
                text = text[: int(room * window.chars_per_token)] + (
                    "\n[truncated: this question's tool-result budget is used up; answer from "
                    "what you have]"
                )
                cost = room
            tool_tokens += cost
            result.reads.extend(outcome.reads)
            results.append(ToolResultBlock(call.id, text, outcome.is_error))
        loop.append(Message("user", tuple(results)))

    if result.stop_reason == "timed_out" or not result.answer:
        result.answer = result.answer or _best_effort(last_text, result)
    return result


_SKIPPED = "[not run: this question's time budget ran out]"
_CALL_SHAPED = ("{", "[", "<tool", "```")


def _partial_answer(streamed: str) -> str:
    """What a call cut at the deadline had streamed, unless it was turning into a tool call
    (call-shaped text is never an answer)."""
    text = streamed.strip()
    return "" if text.startswith(_CALL_SHAPED) else text


async def _run_tool(
    toolbox: Toolbox,
    name: str,
    arguments: Mapping[str, object],
    limits: LoopLimits,
    clock: Callable[[], float],
) -> ToolOutcome | None:
    """The tool's outcome, or None when the soft deadline passes before or while it runs.

    A call still running at the deadline is left to finish in its worker thread (a thread
    cannot be killed; every tool bounds its own work) and its result is dropped.
    """
    remaining = limits.soft_deadline - clock()
    if remaining <= 0:
        return None
    try:
        return await asyncio.wait_for(asyncio.to_thread(toolbox.run, name, arguments), remaining)
    except TimeoutError:
        return None


def _best_effort(last_text: str, result: LoopResult) -> str:
    explored = sorted({r.path for r in result.reads})
    lines = ["[best-effort answer: the time budget ran out before a complete answer]"]
    if last_text:
        lines.append(last_text)
    if explored:
        lines.append("Files examined so far: " + ", ".join(explored))
    if not last_text and not explored:
        lines.append("No findings yet; ask again or narrow the question.")
    return "\n".join(lines)
