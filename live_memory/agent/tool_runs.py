"""Running the loop's tools: under the soft deadline, within the tool-result budget, and the
cold guard's own search (grounding without `tool_choice`, see grounding.py)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Mapping

from live_memory.agent.grounding import Checked, grounding_search, locate, search_terms
from live_memory.config import constants as C
from live_memory.tools import Span, Toolbox, ToolOutcome

__all__ = ["SKIPPED", "ToolBudget", "check_here", "names_missing", "run_tool", "search_here"]

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
) -> tuple[list[str], str, tuple[Span, ...]] | None:
    """The cold guard's own search (no tool_choice needed): where the identifiers of the
    question and the first answer are defined, else every line naming them; with the lines
    it shows (the model sees them: an answer's sources)."""
    terms = search_terms(question_turn.rpartition("Question: ")[2], answer)
    if not terms:
        return None
    text, spans = "", tuple[Span, ...]()
    for definitions in (True, False):
        arguments = grounding_search(terms, definitions=definitions)
        outcome = await run_tool(toolbox, "Grep", arguments, deadline, clock)
        if outcome is None:
            return None
        text, spans = ("", ()) if outcome.is_error else (outcome.text.strip(), outcome.spans)
        if text and not text.startswith("No "):
            break
    return terms, text[: C.GROUNDING_SEARCH_MAX_CHARS], spans


async def names_missing(
    toolbox: Toolbox, names: list[str], deadline: float, clock: Callable[[], float]
) -> tuple[list[str], int] | None:
    """(those of `names` the repository lacks, searches run): not defined in the structural
    index, and no file names them (a word search each). None: no time left."""
    if not names:
        return [], 0
    remaining = deadline - clock()
    if remaining <= 0:
        return None
    try:
        undefined = await asyncio.wait_for(
            asyncio.to_thread(lambda: [n for n in names if not toolbox.defines(n)]), remaining
        )
    except TimeoutError:
        return None
    missing: list[str] = []
    for name in undefined:
        arguments = {"pattern": rf"\b{re.escape(name)}\b", "-i": False, "head_limit": 1}
        outcome = await run_tool(toolbox, "Grep", arguments, deadline, clock)
        if outcome is None:
            return None
        if not outcome.is_error and outcome.text.startswith("No matches"):
            missing.append(name)
    return missing, len(undefined)


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
