"""The cold-memory guard's decision, and grounding that does not need `tool_choice`.

With an empty memory a cheap model confabulates, so its first answer should be grounded in the
workspace before it is trusted. Forcing a tool call (`tool_choice`) does that where the endpoint
honours it. Local servers do not (tests/fixtures/local-model/: llama-cpp-python ignores it,
llama-server lets the model write prose first), and a nearly right first answer was thrown
away for invented "Grep output". There the guard runs the search itself (`grounding_search`)
and hands the model the result as user-side data; and where grounding fails, the first answer
is kept, marked unverified, rather than discarded.

On a local endpoint a second model call is the dear part (a CPU model re-evaluates the search
result and writes the answer again: minutes), while the search costs milliseconds. There the
guard checks the first answer instead (`check_here`): it looks up where the names the answer
uses are defined and returns the answer with those locations (`checked_note`), marked
unverified only when a name was not found. No second call, and the locations come from the
workspace, not from a small model rewriting its answer around search output.

`guard_action` is a small pure function so other grounding sources (the symbol index, via
`LoopLimits.grounded`) can join its inputs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal

from live_memory.config import constants as C
from live_memory.providers import endpoint_kind

__all__ = [
    "ANSWER_CHECK_MAX_NAMES",
    "UNVERIFIED_NOTE",
    "Checked",
    "ForcedTool",
    "GuardAction",
    "answer_names",
    "checked_note",
    "forced_tool_support",
    "grounding_search",
    "guard_action",
    "locate",
    "not_found_note",
    "search_terms",
    "with_unverified_note",
]

ForcedTool = Literal["honoured", "ignored"]
GuardAction = Literal["accept", "force_tool", "search_here", "check_here"]

UNVERIFIED_NOTE: Final = (
    "[unverified: answered before anything was read from the workspace; check the cited "
    "paths before relying on it]"
)

_BACKTICKED = re.compile(r"`([^`\n]{2,80})`")
# Bounded, and CamelCase without a nested repeat: `(?:[A-Z][A-Za-z0-9]*)+\b` tried every way
# of splitting a run of capitals when the run ended in `_` (exponential: 24 capitals, 1 s).
_N: Final = C.MAX_IDENTIFIER_CHARS
_CAMEL = re.compile(rf"\b[A-Z][a-z0-9]{{1,{_N}}}[A-Z][A-Za-z0-9]{{0,{_N}}}\b")
_SNAKE = re.compile(rf"\b[A-Za-z][A-Za-z0-9]{{0,{_N}}}_[A-Za-z0-9_]{{1,{_N}}}\b")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_DEFINITION = r"(class|def|function|func|fn|interface|struct|type|const|let|var|enum)\s+"


def forced_tool_support(provider_name: str, endpoint: str) -> ForcedTool:
    """Whether a forced tool call is honoured: by the providers' own APIs and their gateways,
    yes; by an OpenAI-compatible server of unknown make (llama.cpp, Ollama, ...), not to be
    relied on."""
    kind = endpoint_kind(provider_name, endpoint or None)
    return "ignored" if kind == "openai_compatible" else "honoured"


def guard_action(
    *, cold: bool, tool_calls: int, final_turn: bool, forcing: ForcedTool, local: bool = False
) -> GuardAction:
    """What the guard does with a first reply that is an answer without any tool call."""
    if not cold or tool_calls > 0 or final_turn:
        return "accept"
    if forcing == "honoured":
        return "force_tool"
    return "check_here" if local else "search_here"


def search_terms(
    question: str, answer: str, *, camel: bool = True, limit: int = C.GROUNDING_SEARCH_MAX_TERMS
) -> list[str]:
    """Identifiers worth a search: those the question names first, then the answer's;
    backticked names, CamelCase (unless `camel` is off: prose has "GitHub") and snake_case
    words; a dotted name's last part."""
    terms: list[str] = []
    for text in (question, answer):
        end = C.MAX_KEY_SCAN_CHARS
        found = [m.group(1) for m in _BACKTICKED.finditer(text, 0, end)]
        found += (_CAMEL.findall(text, 0, end) if camel else []) + _SNAKE.findall(text, 0, end)
        for raw in found:
            if "/" in raw or raw.endswith((".py", ".md", ".ts", ".js")):
                continue  # a path, not a symbol
            parts = _IDENTIFIER.findall(raw.split("(")[0].split(".")[-1])
            if parts and parts[0] not in terms:
                terms.append(parts[0])
            if len(terms) >= limit:
                return terms
    return terms


def grounding_search(terms: list[str], *, definitions: bool) -> Mapping[str, object]:
    """Grep arguments for `terms`: where they are defined, or every line naming them."""
    names = "|".join(re.escape(t) for t in terms)
    pattern = f"{_DEFINITION}({names})\\b" if definitions else f"\\b({names})\\b"
    return {
        "pattern": pattern,
        "output_mode": "content",
        "-i": False,
        "head_limit": C.GROUNDING_SEARCH_HEAD_LIMIT,
    }


@dataclass(frozen=True, slots=True)
class Checked:
    """The first answer's names looked up in the workspace (no model call)."""

    found: tuple[tuple[str, str], ...]
    """(name, `path:line`) of each name found, definitions first."""
    missing: tuple[str, ...]
    searches: int

    @property
    def all_found(self) -> bool:
        return bool(self.found) and not self.missing


def locate(terms: list[str], grep_output: str) -> dict[str, str]:
    """`path:line` of the first line of Grep's content output naming each term."""
    located: dict[str, str] = {}
    for line in grep_output.splitlines()[: C.GROUNDING_SEARCH_HEAD_LIMIT * 2]:
        path, _, rest = line.partition(":")
        number, _, text = rest.partition(":")
        if not number.isdigit():
            continue
        for term in terms:
            if term not in located and re.search(rf"\b{re.escape(term)}\b", text):
                located[term] = f"{path}:{number}"
    return located


def checked_note(checked: Checked) -> str:
    """The line appended to a checked answer (shown to the asker, not stored)."""
    parts = [f"`{name}` {where}" for name, where in checked.found]
    parts += [f"`{name}` not found" for name in checked.missing]
    return f"[checked in the workspace without a model call: {'; '.join(parts)}]"


ANSWER_CHECK_MAX_NAMES = 6  # names of one answer looked up in the repository


def answer_names(answer: str) -> list[str]:
    """The code names an answer states (backticked identifiers, snake_case words), each to
    be found in the repository, warm or cold: an invented `retry_with_backoff` is caught."""
    return search_terms("", answer, camel=False, limit=ANSWER_CHECK_MAX_NAMES)


def not_found_note(names: list[str]) -> str:
    """The line beside an answer naming what the repository does not have (not stored)."""
    return f"[not found in the repository: {', '.join(f'`{n}`' for n in names)}]"


def with_unverified_note(answer: str) -> str:
    return f"{answer}\n\n{UNVERIFIED_NOTE}"
