"""The arguments of a question, validated once for both transports (REST `/api/ask` and the
MCP tools), and the JSON Schema the MCP tools declare for them.

Both come from the same constants, so the bounds a client reads in `tools/list` are the
bounds the server enforces: a value the schema allows is accepted by REST and MCP alike, a
value it forbids is refused by both with the same message (`"100"`, `true`, `1.5`, `1e30`,
a negative number or one above the cap). Nothing is coerced.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import SkipValidation, WithJsonSchema

from live_memory.config import constants as C
from live_memory.errors import InputError, PayloadTooLarge

__all__ = [
    "ANSWER_TOKENS_SCHEMA",
    "CWD_SCHEMA",
    "QUESTION_SCHEMA",
    "AnswerTokensParam",
    "CwdParam",
    "QuestionParam",
    "answer_tokens",
    "cwd",
    "question",
]

QUESTION_SCHEMA: dict[str, Any] = {
    "type": "string",
    "minLength": 1,
    "description": (
        "The question about the code, in plain words (where something lives, how a feature "
        "works, what calls what). At most LIVE_MEMORY_MAX_QUESTION_CHARS characters "
        f"({C.MAX_QUESTION_CHARS:,} by default)."
    ),
}
CWD_SCHEMA: dict[str, Any] = {
    "type": "string",
    "minLength": 1,
    "description": (
        "The ABSOLUTE path of the repository root you are working in (not a relative path, "
        "not a file)."
    ),
}
ANSWER_TOKENS_SCHEMA: dict[str, Any] = {
    "type": "integer",
    "minimum": 0,
    "maximum": C.MAX_ANSWER_TOKENS_CAP,
    "description": (
        "Optional cap on the answer's length in tokens. 0 or absent: the server default; "
        f"values below {C.MIN_ANSWER_TOKENS} are raised to {C.MIN_ANSWER_TOKENS}."
    ),
}

# Parameter types for the MCP tool functions: the SDK publishes the schema as given and
# hands the raw JSON value through, so the functions below are the only validation.
# The two strings are declared `str` with validation skipped (the value still arrives as
# sent): for any other annotation the SDK first tries each string as JSON, so a question
# such as `["a", "b"]` reached `question` as a list and was refused, and every call paid two
# failed JSON parses.
QuestionParam = Annotated[str, SkipValidation, WithJsonSchema(QUESTION_SCHEMA)]
CwdParam = Annotated[str, SkipValidation, WithJsonSchema(CWD_SCHEMA)]
AnswerTokensParam = Annotated[object, WithJsonSchema(ANSWER_TOKENS_SCHEMA)]


def question(value: object, limit: int) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InputError("question must be a non-empty string")
    if len(value) > limit:
        raise PayloadTooLarge(
            f"question is {len(value)} characters; LIVE_MEMORY_MAX_QUESTION_CHARS is {limit}"
        )
    return value.strip()


def cwd(value: object) -> str:
    if not isinstance(value, str) or not value:
        raise InputError("cwd must be the absolute path of your repository root")
    return value


def answer_tokens(value: object) -> int | None:
    """None (absent or JSON null) or an integer within ANSWER_TOKENS_SCHEMA's bounds."""
    if value is None:
        return None
    low, high = ANSWER_TOKENS_SCHEMA["minimum"], ANSWER_TOKENS_SCHEMA["maximum"]
    # bool is an int subclass and JSON `true` must not mean 1; floats (1.5, 1e30) are refused
    # even when integral, as the schema's "integer" says.
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:40] + "…"
        raise InputError(
            f"max_answer_tokens must be an integer from {low} to {high} "
            f"(0 = the server default); got {shown}"
        )
    return value
