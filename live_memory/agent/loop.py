"""The agent loop: one question, answered with read-only tools, within its budgets.

Stop reasons are explicit: `answered`, `max_iterations`, `timed_out`, `max_tokens`.
Tool failures are results the model sees, never loop-enders.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal

from live_memory.agent.grounding import (
    ForcedTool,
    answer_names,
    checked_note,
    forced_tool_support,
    guard_action,
    not_found_note,
)
from live_memory.agent.loop_result import (
    LoopResult,
    StopReason,
    best_effort,
    finish,
    no_answer,
)
from live_memory.agent.progress import QuestionProgress
from live_memory.agent.prompt import (
    COLD_MEMORY_NUDGE,
    FINAL_ANSWER_NUDGE,
    grounding_turn,
    recheck_turn,
)
from live_memory.agent.reply_check import (
    correction_for,
    judge_reply,
    partial_answer,
)
from live_memory.agent.sources import SOURCES_MAX
from live_memory.agent.tool_runs import (
    SKIPPED,
    ToolBudget,
    check_here,
    names_missing,
    run_tool,
    search_here,
)
from live_memory.config import constants as C
from live_memory.memory import Window, build_request
from live_memory.providers import (
    CacheTtl,
    ChatResponse,
    Message,
    Provider,
    StreamTap,
    TextBlock,
    ToolResultBlock,
)
from live_memory.tools import Span, Toolbox

__all__ = ["LoopLimits", "LoopResult", "StopReason", "run_agent_loop"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class LoopLimits:
    soft_deadline: float
    """Monotonic time by which a (best-effort) answer must be returned."""
    max_answer_tokens: int
    max_iterations: int = C.MAX_AGENT_ITERATIONS
    tool_result_token_budget: int = C.QUESTION_TOOL_RESULT_TOKEN_BUDGET
    cold_guard: bool = True
    grounded: bool = False
    """The structural index grounds this question: its core map of the whole workspace is
    in the stable prefix, or the retrieval delta names where the question's subject is
    defined. The memory is not cold for it."""
    cache_ttl: CacheTtl | None = None
    cache_min_tokens: int = 0
    forced_tool: ForcedTool | None = None
    """Whether the endpoint honours a forced tool call; None: judged from its kind."""
    local: bool = False
    """A model server on the user's machine: the cold guard checks a first answer with its
    own search instead of paying a second model call (grounding.check_here)."""
    check_names: bool = True
    """Every answer's code names are looked up in the repository, warm or cold; what it
    lacks is looked for again once (not on a local endpoint) and then marked."""


def _is_cold(window: Window) -> bool:
    has_content = any(f.content for f in window.files.values())
    ledger_chars = sum(len(f.text) for f in window.ledger)
    return not has_content and ledger_chars < C.COLD_LEDGER_MAX_CHARS


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
    progress: QuestionProgress | None = None,
) -> LoopResult:
    """Run one question on `window` (a private copy; calibration is its only mutation).

    Raises ProviderError (PromptTooLong included) when the provider fails after retries.
    """
    result = LoopResult(model=model)
    loop: list[Message] = []
    tools = toolbox.specs()
    cold = limits.cold_guard and not limits.grounded and _is_cold(window)
    forcing = limits.forced_tool or forced_tool_support(provider.name, provider.endpoint)
    budget = ToolBudget(limits.tool_result_token_budget, window.chars_per_token)
    last_text = ""
    force_tool = False
    kept: str | None = None  # the cold guard's first answer, kept while it grounds
    grounding: Literal["", "forced", "searched"] = ""  # what the guard did, for the next reply
    corrected = False  # the one correction of a reply that was not an answer
    rechecked = False  # the one turn after an answer naming what the repository lacks

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
        tap = progress.model_call() if progress is not None else StreamTap()
        request = replace(request, tap=tap)
        force_tool = False
        called = clock()
        try:
            response: ChatResponse = await asyncio.wait_for(provider.chat(request), remaining)
        except TimeoutError:
            # The cancelled call closed its stream (the server stops); keep what it said.
            last_text = partial_answer(tap.text, tools) or last_text
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
            window.calibrate(request.prompt_chars(), response.usage.input_tokens)
        calls = response.tool_calls
        blocks = response.blocks
        verdict = None if calls else judge_reply(response.text, tools)
        if verdict is not None and verdict.calls:  # a call written as text, left by the adapter
            calls, blocks = verdict.calls, verdict.calls
            verdict = None
        if calls and response.text.strip():
            last_text = response.text.strip()
        answering_guard, grounding = grounding, ""
        result.forced_tool_ignored |= answering_guard == "forced" and not calls
        if verdict is not None and verdict.is_answer:
            last_text = verdict.text
            if answering_guard == "forced" or (
                answering_guard == "searched" and verdict.kind == "refusal"
            ):
                # A forced tool ignored, or a refusal after our search: keep the first answer.
                finish(result, response, kept or verdict.text, unverified=True)
                break
            action = guard_action(
                cold=cold and kept is None,
                tool_calls=result.tool_calls,
                final_turn=final_turn,
                forcing=forcing,
                local=limits.local,
            )
            if action == "check_here":
                if progress is not None:
                    progress.tool("Grep (checking the answer's names)")
                checked = await check_here(
                    toolbox, question_turn, verdict.text, limits.soft_deadline, clock
                )
                if checked is not None:
                    result.tool_calls += checked.searches
                    result.checked = checked_note(checked)
                    for _, where in checked.found:  # located by our search: the sources
                        path, _, line = where.rpartition(":")
                        result.spans.append(Span(path, int(line), int(line)))
                unverified = checked is None or not checked.all_found
                finish(result, response, verdict.text, unverified=unverified)
                break
            if action == "force_tool":
                kept, grounding, force_tool = verdict.text, "forced", True
                loop += [
                    Message("assistant", response.blocks),
                    Message("user", (TextBlock(COLD_MEMORY_NUDGE),)),
                ]
                continue
            if action == "search_here":
                if progress is not None:
                    progress.tool("Grep (grounding search)")
                found = await search_here(
                    toolbox, question_turn, verdict.text, limits.soft_deadline, clock
                )
                if found is None:  # nothing to search for, or no time: keep it, say so
                    finish(result, response, verdict.text, unverified=True)
                    break
                terms, output, shown = found
                result.spans.extend(shown[:SOURCES_MAX])
                result.tool_calls += 1
                kept, grounding = verdict.text, "searched"
                loop += [
                    Message("assistant", (TextBlock(verdict.text),)),
                    Message("user", (TextBlock(grounding_turn(terms, budget.take(output))),)),
                ]
                continue
            names = answer_names(verdict.text) if limits.check_names else []
            lacking = await names_missing(toolbox, names, limits.soft_deadline, clock)
            missing = lacking[0] if lacking else []
            asked = question_turn.rpartition("Question: ")[2]
            invented = [n for n in missing if n not in asked]  # not the question's own subject
            if invented and not rechecked and not final_turn and not limits.local:
                # One more turn to look again (a local model's second call costs minutes:
                # there the answer is only marked).
                rechecked = True
                loop += [
                    Message("assistant", response.blocks),
                    Message("user", (TextBlock(recheck_turn(invented)),)),
                ]
                continue
            result.checked = not_found_note(missing) if missing else ""
            finish(result, response, verdict.text)
            break
        if verdict is not None:  # not an answer: never returned, never stored
            result.non_answer = verdict.kind
            if kept is not None:
                finish(result, response, kept, unverified=True)
                break
            if not corrected and not final_turn:
                corrected = True
                _with_user_text(loop, correction_for(verdict, tools))
                continue
            result.answer = no_answer(verdict.kind, result)
            break
        if final_turn:
            result.answer = result.written = response.text.strip()
            result.stop_reason = "max_iterations"
            break
        loop.append(Message("assistant", blocks))
        results = []
        for call in calls:
            # The deadline holds between tool calls too: one turn may ask for many slow
            # reads, and the best-effort answer is due at the soft deadline, not after them.
            if progress is not None:
                progress.tool(call.name)
            outcome = await run_tool(
                toolbox, call.name, call.arguments, limits.soft_deadline, clock
            )
            if outcome is None:
                results.append(ToolResultBlock(call.id, SKIPPED, True))
                continue
            result.tool_calls += 1
            result.reads.extend(outcome.reads)
            result.spans.extend(outcome.spans)
            del result.spans[SOURCES_MAX:]  # bounded: no answer carries more sources
            results.append(ToolResultBlock(call.id, budget.take(outcome.text), outcome.is_error))
        loop.append(Message("user", tuple(results)))

    if result.stop_reason == "timed_out" or not result.answer:
        result.answer = result.answer or best_effort(last_text, result)
    return result
