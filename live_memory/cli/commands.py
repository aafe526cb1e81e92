"""The CLI commands that talk to a running server: status, stats, ask, actors, reset, empty."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TextIO

from live_memory.cli.client import Reply, ServerClient
from live_memory.cli.outcome import CommandFailed, ExitCode
from live_memory.cli.render import (
    render_actors,
    render_answer,
    render_by_day,
    render_health,
    render_json,
    render_mapping,
    render_workspace_action,
)
from live_memory.config import constants as C

__all__ = ["Invocation", "actors", "ask", "clear", "clear_all", "reset", "stats", "status"]


@dataclass(frozen=True, slots=True)
class Invocation:
    """What every remote command needs: the server, the output mode and where to write."""

    client: ServerClient
    as_json: bool
    out: TextIO

    def emit(self, text: str) -> None:
        self.out.write(text if text.endswith("\n") else text + "\n")


def status(inv: Invocation) -> int:
    health = _object(inv.client.get("/health").json(), "GET /health")
    inv.emit(render_json(health) if inv.as_json else render_health(health, inv.client.base_url))
    return ExitCode.OK


def stats(inv: Invocation, cwd: str | None, by_day: bool) -> int:
    """One workspace's stats; with `by_day`, usage per day of `cwd` or, without it, of all."""
    if by_day:
        return _stats_by_day(inv, cwd)
    where = cwd or _here()
    if inv.as_json:
        inv.emit(render_json(inv.client.get("/stats", {"cwd": where}).json()))
        return ExitCode.OK
    reply = inv.client.get("/stats", {"cwd": where, "format": "text"})
    inv.emit(reply.text if not reply.is_json else render_mapping(reply.json()))
    return ExitCode.OK


def _stats_by_day(inv: Invocation, cwd: str | None) -> int:
    """`/stats?by_day=1[&cwd=]`: the JSON as it is with --json, else a table of the days."""
    params = {"by_day": "1", **({"cwd": cwd} if cwd else {})}
    payload = inv.client.get("/stats", params).json()
    if inv.as_json:
        inv.emit(render_json(payload))
        return ExitCode.OK
    body = _object(payload, "GET /stats")
    days = body.get("by_day")
    if not isinstance(days, list):
        raise CommandFailed("GET /stats?by_day=1 answered without a by_day list (an old server?)")
    workspace = body.get("workspace")
    inv.emit(f"usage by day of {workspace}" if workspace else "usage by day, all workspaces")
    inv.emit(render_by_day([day for day in days if isinstance(day, Mapping)]))
    return ExitCode.OK


def _here() -> str:
    return os.path.abspath(os.getcwd())


def ask(
    inv: Invocation,
    question: str,
    cwd: str,
    max_answer_tokens: int | None,
    progress: TextIO | None = None,
) -> int:
    """The answer; with `progress` (a terminal), asked over MCP with its progress drawn there."""
    body: dict[str, object] = {"question": question, "cwd": cwd}
    if max_answer_tokens is not None:
        body["max_answer_tokens"] = max_answer_tokens
    if progress is not None and not inv.as_json:
        inv.client.get("/health")  # a server that is down or not ours fails here, clearly
        from live_memory.cli.ask_progress import ask_over_mcp  # noqa: PLC0415 (the SDK: ~0.3 s)

        text = ask_over_mcp(
            inv.client.base_url,
            inv.client.auth_headers(),
            body,
            timeout_s=C.CLI_ASK_TIMEOUT_S,
            progress=progress,
        )
        inv.emit(text)
        return ExitCode.OK
    reply = inv.client.post("/api/ask", body, timeout_s=C.CLI_ASK_TIMEOUT_S)
    payload: object = reply.json() if reply.is_json else reply.text
    if inv.as_json:
        inv.emit(render_json(payload if reply.is_json else {"answer": payload}))
    else:
        inv.emit(render_answer(payload))
    return ExitCode.OK


def actors(inv: Invocation) -> int:
    payload = inv.client.get("/actors").json()
    if inv.as_json:
        inv.emit(render_json(payload))
        return ExitCode.OK
    listing = payload.get("actors") if isinstance(payload, Mapping) else payload
    if not isinstance(listing, Sequence) or isinstance(listing, str):
        raise CommandFailed("GET /actors answered something that is not a list of actors")
    inv.emit(render_actors([item for item in listing if isinstance(item, Mapping)]))
    return ExitCode.OK


def reset(inv: Invocation, cwd: str) -> int:
    return _workspace_action(inv, "/reset", cwd, "reset: memory wiped, preload re-read")


def clear(inv: Invocation, cwd: str) -> int:
    return _workspace_action(inv, "/clear", cwd, "emptied: memory wiped")


def clear_all(inv: Invocation) -> int:
    """`empty --all`: every workspace the server knows, loaded or only stored."""
    reply = _object(inv.client.post("/clear", {"all": True}).json(), "POST /clear")
    if inv.as_json:
        inv.emit(render_json(reply))
        return ExitCode.OK
    loaded, stored = reply.get("loaded", 0), reply.get("stored", 0)
    inv.emit(
        f"emptied every workspace: {reply.get('cleared', 0)} ({loaded} loaded, {stored} stored)"
    )
    return ExitCode.OK


def _workspace_action(inv: Invocation, route: str, cwd: str, done: str) -> int:
    """One line for people (the workspace, what happened, what it holds now); the server's
    whole answer with --json."""
    reply: Reply = inv.client.post(route, {"cwd": cwd})
    payload: object = reply.json() if reply.is_json and reply.body.strip() else {}
    if inv.as_json:
        inv.emit(render_json(payload))
        return ExitCode.OK
    inv.emit(render_workspace_action(payload, cwd, done))
    return ExitCode.OK


def _object(payload: object, what: str) -> Mapping[str, object]:
    if not isinstance(payload, Mapping):
        raise CommandFailed(f"{what} answered something that is not a JSON object")
    return payload
