"""Running the loop's tools: under the soft deadline, within the tool-result budget, and the
cold guard's own search (grounding without `tool_choice`, see grounding.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping

from live_memory.agent.grounding import Checked, grounding_search, locate, search_terms
from live_memory.config import constants as C
from live_memory.tools import Toolbox, ToolOutcome

__all__ = ["SKIPPED", "ToolBudget", "check_here", "run_tool", "search_here"]

SKIPPED = "[not run: this question's time budget ran out]"


async def run_tool(
    toolbox: Toolbox,
    name: str,
    arguments: Mapping[str, object],
    deadline: float,
    clock: Callable[[], float],
) -> ToolOutcome | None:
    """The tool's outcome, or None when the soft deadline passes before or while it runs.

    A call still running at the deadline is left to finish in its worker thread (a thread
    cannot be killed; every tool bounds its own work) and its result is dropped.
    """
    remaining = deadline - clock()
    if remaining <= 0:
        return None
    try:
        return await asyncio.wait_for(asyncio.to_thread(toolbox.run, name, arguments), remaining)
    except TimeoutError:
        return None


class ToolBudget:
    """This question's tool-result token budget; output past it is cut with a notice."""

    def __init__(self, tokens: int, chars_per_token: float) -> None:
        self._left = tokens
        self._chars_per_token = chars_per_token

    def take(self, text: str) -> str:
        cost = int(len(text) / self._chars_per_token)
        if cost > self._left:
            text = text[: int(self._left * self._chars_per_token)] + (
                "\n[truncated: this question's tool-result budget is used up; answer from "
                "what you have]"
            )
            cost = self._left
        self._left -= cost
        return text


async def search_here(
    toolbox: Toolbox,
    question_turn: str,
    answer: str,
    deadline: float,
    clock: Callable[[], float],
) -> tuple[list[str], str] | None:
    """The cold guard's own search (no tool_choice needed): where the identifiers of the
    question and the first answer are defined, else every line naming them."""
    terms = search_terms(question_turn.rpartition("Question: ")[2], answer)
    if not terms:
        return None
    text = ""
    for definitions in (True, False):
        arguments = grounding_search(terms, definitions=definitions)
        outcome = await run_tool(toolbox, "Grep", arguments, deadline, clock)
        if outcome is None:
            return None
        text = "" if outcome.is_error else outcome.text.strip()
        if text and not text.startswith("No "):
            break
    return terms, text[: C.GROUNDING_SEARCH_MAX_CHARS]


async def check_here(
    toolbox: Toolbox,
    question_turn: str,
    answer: str,
    deadline: float,
    clock: Callable[[], float],
) -> Checked | None:
    """The cold guard's check of a first answer on a local endpoint: where the names it uses
    (then the question's) are defined, else mentioned. None: nothing to look up, or no time."""
    terms = search_terms(answer, question_turn.rpartition("Question: ")[2])
    if not terms:
        return None
    located: dict[str, str] = {}
    searches = 0
    for definitions in (True, False):
        wanted = [t for t in terms if t not in located]
        if not wanted:
            break
        arguments = grounding_search(wanted, definitions=definitions)
        outcome = await run_tool(toolbox, "Grep", arguments, deadline, clock)
        if outcome is None:
            return None
        searches += 1
        if not outcome.is_error:
            located |= locate(wanted, outcome.text[: C.GROUNDING_SEARCH_MAX_CHARS])
    found = tuple((t, located[t]) for t in terms if t in located)
    missing = tuple(t for t in terms if t not in located)
    return Checked(found, missing, searches)
