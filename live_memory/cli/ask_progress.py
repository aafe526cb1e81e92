"""`live-memory ask` on a terminal: the question over MCP, with the server's progress shown.

The server reports what a question is doing (model call n, the tool running, tokens streamed
so far) as MCP progress notifications, and `/api/ask` has no such channel; so on a terminal the
CLI asks through the MCP SDK's own client and draws each report on one stderr line (elapsed
seconds and what it is doing), erased when the answer arrives. Scripts (no terminal, `--json`)
keep the plain `/api/ask`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, TextIO

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, TextContent

from live_memory.cli.outcome import CommandFailed, ExitCode

__all__ = ["ask_over_mcp"]

_ASK_TOOL = "ask_live_memory"
_LINE_MAX = 100
"""Characters of a progress line (one terminal line, redrawn in place)."""
_CONNECT_TIMEOUT_S = 5.0


class ProgressLine:
    """One stderr line redrawn in place with each report; cleared before the answer."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.shown = False

    def show(self, elapsed_s: float, doing: str | None) -> None:
        text = f"… {elapsed_s:.0f} s: {doing or 'working'}"
        if len(text) > _LINE_MAX:
            text = text[: _LINE_MAX - 1] + "…"
        self.stream.write(f"\r\x1b[2K{text}")
        self.stream.flush()
        self.shown = True

    def clear(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()
            self.shown = False


async def _call(
    url: str,
    headers: Mapping[str, str],
    arguments: dict[str, object],
    timeout_s: float,
    line: ProgressLine,
) -> CallToolResult:
    async def report(progress: float, total: float | None, message: str | None) -> None:
        line.show(progress, message)  # `progress`: the elapsed seconds, as the server counts

    timeout = httpx2.Timeout(timeout_s, connect=_CONNECT_TIMEOUT_S)
    async with (
        httpx2.AsyncClient(headers=dict(headers), timeout=timeout) as http,
        streamable_http_client(f"{url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        sent: dict[str, Any] = dict(arguments)
        result = await session.call_tool(
            _ASK_TOOL, sent, read_timeout_seconds=timeout_s, progress_callback=report
        )
    if not isinstance(result, CallToolResult):
        raise CommandFailed(f"the server answered {type(result).__name__}, not a tool result")
    return result


def ask_over_mcp(
    url: str,
    headers: Mapping[str, str],
    arguments: dict[str, object],
    *,
    timeout_s: float,
    progress: TextIO,
) -> str:
    """The answer text (with its trailer), progress drawn on `progress` meanwhile.

    Raises CommandFailed: the tool's own error (exit 1), or a transport failure."""
    line = ProgressLine(progress)
    try:
        result = asyncio.run(_call(url, headers, arguments, timeout_s, line))
    except CommandFailed:
        raise
    except Exception as exc:  # the SDK's transport errors arrive as groups of many kinds
        raise CommandFailed(f"asking over MCP at {url}/mcp failed: {exc}") from exc
    finally:
        line.clear()
    text = "".join(c.text for c in result.content if isinstance(c, TextContent))
    if result.is_error:
        raise CommandFailed(text or "the question failed", ExitCode.FAILED)
    return text
