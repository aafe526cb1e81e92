"""A plain `ask_live_memory` call answered without the SDK's request runner.

`serve_one` (mcp_single_call) still walks, for every question, the runner's middleware (an
OpenTelemetry span, request state), a params model, the tool manager, a `Context`, and the
tool's argument model, only to hand two strings to `LiveMemoryService.ask`: 0.4 ms of the
event loop's CPU per question, on the answer's path. A call the tool would receive exactly
as sent goes straight to the service here, and its result is built from the SDK's own types
(`CallToolResult`) and shaped for the protocol version by the SDK's own surface
(`serialize_server_result`), as the runner shapes it; tests/gateway/test_mcp_direct_ask.py
holds the two ways to the same bytes for every handshake-era version.

Taken only when nothing else could differ: the tool is `ask_live_memory`, its arguments are
`question` and `cwd` with at most `max_answer_tokens` beside them, and that one, if sent, is
an integer or null (the SDK would try a string as JSON first); no tracer is configured (the
SDK's span would be missing). Anything else keeps the SDK's way.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from mcp.types import CallToolResult, TextContent
from mcp_types.methods import serialize_server_result
from opentelemetry import trace
from pydantic import BaseModel, Field

from live_memory.errors import LiveMemoryError
from live_memory.workspace import Answer

__all__ = ["ASK_TOOL", "AskCall", "AskOutput", "ask_call", "ask_result", "ask_tool_result"]

logger = logging.getLogger(__name__)

ASK_TOOL = "ask_live_memory"
_PARAMS = frozenset({"name", "arguments"})
_ARGUMENTS = frozenset({"question", "cwd", "max_answer_tokens"})
_UNTRACED = (trace.ProxyTracerProvider, trace.NoOpTracerProvider)

AskCall = tuple[object, object, object]
"""question, cwd and max_answer_tokens, as sent."""


class SourceItem(BaseModel):
    path: str = Field(description="Workspace-relative path.")
    start_line: int | None = Field(description="First line; null: the file as a whole.")
    end_line: int | None
    checked: bool = Field(description="The file exists and holds these lines (checked now).")
    seen: bool = Field(description="Read this session; false: named but never read.")


class AskOutput(BaseModel):
    """The structured part of an answer: its text again, and the files and line ranges it
    rests on. The text too, since a client may hand the model the structured part in place
    of the text (Claude Code does: tests/e2e/test_readme_walkthrough.py)."""

    text: str = Field(description="The answer followed by its trailer, as in the content.")
    sources: list[SourceItem]


def ask_tool_result(answer: Answer) -> CallToolResult:
    """The tool's result for `answer`: its text (answer and trailer) and, beside it, the
    text with its sources (`AskOutput`, the tool's output schema). Both ways build it here."""
    sources = [dataclasses.asdict(s) for s in answer.sources]
    return CallToolResult(
        content=[TextContent(type="text", text=answer.text)],
        structured_content={"text": answer.text, "sources": sources},
    )


def ask_call(params: object) -> AskCall | None:
    """The arguments of a `tools/call` the direct way answers as the SDK would, or None."""
    if not isinstance(params, Mapping) or not params.keys() <= _PARAMS:
        return None
    arguments = params.get("arguments")
    if params.get("name") != ASK_TOOL or not isinstance(arguments, dict):
        return None
    if not arguments.keys() <= _ARGUMENTS or "question" not in arguments or "cwd" not in arguments:
        return None
    tokens = arguments.get("max_answer_tokens", 0)  # absent: the tool's default
    if tokens is not None and type(tokens) is not int:
        return None  # a string is parsed as JSON first by the SDK; floats, bools its way too
    if not isinstance(trace.get_tracer_provider(), _UNTRACED):
        return None
    return arguments["question"], arguments["cwd"], tokens


async def ask_result(
    ask: Callable[[object, object, object], Awaitable[Answer]], call: AskCall, version: str
) -> dict[str, Any]:
    """Ask, and the `tools/call` result as the runner would send it: the answer, or the error
    as the tool reports it (`is_error`, in the SDK's words)."""
    try:
        result = ask_tool_result(await ask(*call))
    except (LiveMemoryError, TimeoutError) as exc:
        text = f"Error executing tool {ASK_TOOL}: {exc}"
        logger.info("Tool %r failed: %r", ASK_TOOL, text)
        result = _error(text)
    except Exception:  # a crash: its text stays in the server's log, as with the SDK
        logger.exception("Tool %r raised an unexpected exception", ASK_TOOL)
        result = _error(f"Error executing tool {ASK_TOOL}")
    dumped = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    return serialize_server_result("tools/call", version, dumped)


def _error(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)
