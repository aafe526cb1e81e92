"""The MCP surface: `ask_live_memory` (and, opt-in, the async submit/result pair).

The server advertises what it has and nothing more: tools (no prompts, no resources), its
package version as `serverInfo.version` (the same string as `/health` and `--version`), and
for each parameter a description and the bounds `ask_arguments` enforces. `max_answer_tokens`
defaults to 0 (= the server default), so its schema is a plain integer with an integer default
(a None default made the SDK publish `"default": null` beside `"type": "integer"`).

A call without `question` or `cwd` is answered, through the SDK's (public, provisional)
middleware, with what the argument is, before the SDK's argument model would refuse it in
pydantic's words and with pydantic's URL.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Annotated, Any, Final

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.jsonrpc_dispatcher import progress_token_from_params
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from live_memory import __version__
from live_memory.agent import QuestionProgress
from live_memory.errors import LiveMemoryError
from live_memory.gateway.ask_arguments import AnswerTokensParam, CwdParam, QuestionParam
from live_memory.gateway.mcp_direct_ask import ASK_TOOL, AskOutput, ask_tool_result
from live_memory.gateway.mcp_progress import report_progress
from live_memory.gateway.service import LiveMemoryService

__all__ = ["ASK_DESCRIPTION", "build_mcp_server"]

logger = logging.getLogger(__name__)

ASK_DESCRIPTION = """\
Ask Live Memory, a persistent read-only memory of this repository, a question about the code:
where something lives, how a feature works, what calls what, why something changed, which files
matter for a task. It answers from what it already knows (files you and it have read, earlier
answers, distilled knowledge) and explores with read-only tools only where needed, so it is much
cheaper than re-reading many files yourself. Ask broad "where / how / what calls" questions
before exploring; it cannot edit files. Always pass `cwd` = the ABSOLUTE path of the repository
root you are working in. Optional `max_answer_tokens` raises or lowers the answer length.
"""

_JobIdParam = Annotated[
    str,
    Field(min_length=1, description="The job_id that ask_live_memory_submit returned."),
]
_READ_ONLY = ToolAnnotations(
    title="Ask Live Memory", read_only_hint=True, destructive_hint=False, open_world_hint=False
)


# Request methods MCPServer always registers for features this server does not offer; with
# them registered it would advertise `prompts` and `resources` capabilities it lacks.
_UNOFFERED_METHODS = (
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "resources/subscribe",
    "resources/unsubscribe",
)


_REQUIRED: Final = (
    ("question", "question is required: the question about the code, in plain words"),
    ("cwd", "cwd is required: the absolute path of the repository root"),
)
_ASK_TOOLS: Final = frozenset({ASK_TOOL, "ask_live_memory_submit"})


async def _required_arguments(
    ctx: ServerRequestContext[Any, Any], call_next: CallNext
) -> HandlerResult:
    """An ask without `question` or `cwd`: a tool error saying what the argument is."""
    params = ctx.params
    if ctx.method == "tools/call" and params is not None and params.get("name") in _ASK_TOOLS:
        arguments = params.get("arguments")
        given = arguments if isinstance(arguments, dict) else {}
        missing = [text for name, text in _REQUIRED if name not in given]
        if missing:
            text = f"Error executing tool {params['name']}: {'; '.join(missing)}"
            return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)
    return await call_next(ctx)


def build_mcp_server(service: LiveMemoryService) -> MCPServer:
    server = MCPServer(
        "live-memory",
        title="Live Memory",
        instructions=ASK_DESCRIPTION,
        version=__version__,
        log_level="WARNING",
    )
    handlers = server._lowlevel_server._request_handlers  # no public way to drop them
    for method in _UNOFFERED_METHODS:
        handlers.pop(method, None)
    server.middleware.append(_required_arguments)

    @server.tool(
        name=ASK_TOOL,  # the direct way (mcp_direct_ask) answers plain calls of this tool
        description=ASK_DESCRIPTION,
        annotations=_READ_ONLY,
    )
    async def ask_live_memory(
        question: QuestionParam,
        cwd: CwdParam,
        ctx: Context,
        max_answer_tokens: AnswerTokensParam = 0,
    ) -> Annotated[CallToolResult, AskOutput]:
        if progress_token_from_params(ctx.request_context.params) is None:
            # The client asked for no progress (no progressToken): every report would be
            # dropped, so run no reporter and let the loop write to no board (it woke this
            # event loop from the question's thread on each change).
            try:
                return ask_tool_result(await service.ask(question, cwd, max_answer_tokens))
            except (LiveMemoryError, TimeoutError) as exc:
                raise ToolError(str(exc)) from exc
        progress = QuestionProgress()

        async def report(elapsed: float, message: str) -> None:
            await ctx.report_progress(elapsed, None, message)

        reporter = asyncio.ensure_future(report_progress(progress, report))
        task = asyncio.ensure_future(service.ask(question, cwd, max_answer_tokens, progress))
        try:
            await asyncio.wait({task, reporter}, return_when=asyncio.FIRST_COMPLETED)
            if not task.done():  # the reporter failed (the client went away): so be it
                reporter.result()
            return ask_tool_result(await task)
        except (LiveMemoryError, TimeoutError) as exc:
            raise ToolError(str(exc)) from exc
        finally:
            for running in (reporter, task):
                if not running.done():
                    running.cancel()

    if service.settings.async_tools:
        _add_async_tools(server, service)
    return server


def _add_async_tools(server: MCPServer, service: LiveMemoryService) -> None:
    jobs = service.jobs

    @server.tool(
        name="ask_live_memory_submit",
        description=(
            "Start an ask_live_memory question in the background and return a job id at once. "
            "Collect the answer later with ask_live_memory_result. Same arguments as "
            "ask_live_memory: question, cwd (ABSOLUTE repository root), max_answer_tokens?"
        ),
        annotations=_READ_ONLY,
        structured_output=False,
    )
    async def ask_live_memory_submit(
        question: QuestionParam, cwd: CwdParam, max_answer_tokens: AnswerTokensParam = 0
    ) -> str:
        try:
            service.check_ask(question, cwd, max_answer_tokens)
        except LiveMemoryError as exc:
            raise ToolError(str(exc)) from exc
        job_id = jobs.submit(_answer_text(service, question, cwd, max_answer_tokens))
        return f"job_id={job_id}\nPoll ask_live_memory_result with this job_id for the answer."

    @server.tool(
        name="ask_live_memory_result",
        description=(
            "The answer of a job started with ask_live_memory_submit, or `[running]` while it "
            "is still being answered. Each answer can be collected once."
        ),
        annotations=_READ_ONLY,
        structured_output=False,
    )
    async def ask_live_memory_result(job_id: _JobIdParam) -> str:
        try:
            text = jobs.result(job_id.strip().removeprefix("job_id="))
        except (LiveMemoryError, TimeoutError) as exc:
            raise ToolError(str(exc)) from exc
        return "[running]" if text is None else text


async def _answer_text(
    service: LiveMemoryService, question: object, cwd: object, max_answer_tokens: object
) -> str:
    return (await service.ask(question, cwd, max_answer_tokens)).text
