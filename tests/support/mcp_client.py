"""A real MCP client session against a running server."""

from __future__ import annotations

import asyncio
from typing import Any

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

__all__ = ["abandon_tool_call", "call_tool", "call_tool_result", "list_tools"]


async def _session_call(url: str, name: str | None, arguments: dict[str, Any]) -> Any:
    async with (
        streamable_http_client(f"{url}/mcp") as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        if name is None:
            return await session.list_tools()
        return await session.call_tool(name, arguments)


def call_tool(url: str, name: str, arguments: dict[str, Any]) -> tuple[bool, str]:
    """(is_error, text) of one tool call made by the real mcp client."""
    result = asyncio.run(_session_call(url, name, arguments))
    return bool(result.is_error), "".join(getattr(c, "text", "") for c in result.content)


def call_tool_result(url: str, name: str, arguments: dict[str, Any]) -> CallToolResult:
    """The whole result of one tool call (structured content included), as the real mcp
    client received and validated it against the tool's output schema."""
    result: CallToolResult = asyncio.run(_session_call(url, name, arguments))
    return result


def list_tools(url: str) -> list[Any]:
    return list(asyncio.run(_session_call(url, None, {})).tools)


async def _abandoned_call(url: str, name: str, arguments: dict[str, Any], after_s: float) -> None:
    async with (
        streamable_http_client(f"{url}/mcp") as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        try:
            await asyncio.wait_for(session.call_tool(name, arguments), after_s)
        except TimeoutError:
            return
    raise AssertionError("the tool call finished before the client gave up")


def abandon_tool_call(url: str, name: str, arguments: dict[str, Any], after_s: float) -> None:
    """Start a tool call, give up on it after `after_s` and close the session, as a client
    whose user pressed Esc or whose process died would."""
    asyncio.run(_abandoned_call(url, name, arguments, after_s))
