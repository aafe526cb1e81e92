"""The dashboard's data, fetched through the service: health, actor inventory, usage ledger,
and `InspectWorkspace` messages to live workspaces. Passivated workspaces are every snapshot
in the store, listed a page at a time (newest first), and read from their snapshot files, so
looking at the dashboard never activates or keeps alive a workspace.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from concurrent.futures import Future
from pathlib import Path

from live_memory.actors import InspectWorkspace, ListWorkspaces, Route, snapshot_detail
from live_memory.config import constants as C
from live_memory.errors import LiveMemoryError, UnknownWorkspace
from live_memory.gateway.bridge import wait_reply
from live_memory.gateway.service import LiveMemoryService
from live_memory.hygiene import redact_secrets

__all__ = ["active_roots", "actor_rows", "mark_actors", "overview", "workspace_page"]

logger = logging.getLogger(__name__)

Row = dict[str, object]


async def active_roots(service: LiveMemoryService) -> list[str]:
    reply: Future[list[str]] = Future()
    service.gateway.tell(ListWorkspaces(reply))
    return await wait_reply(reply, C.EDGE_REPLY_TIMEOUT_S)


async def _inspect(service: LiveMemoryService, root: str, *, detail: bool, query: str) -> Row:
    reply: Future[Row] = Future()
    message = InspectWorkspace(detail, query, reply)
    service.flush_notifications()  # what a 200 was given for shows on the page
    service.gateway.tell(Route(root, message, activate_unknown=False))
    return await wait_reply(reply, C.EDGE_REPLY_TIMEOUT_S)


def actor_rows(service: LiveMemoryService) -> list[Row]:
    settings = service.settings
    return mark_actors(service.actors(), settings.stuck_after_s, settings.fork_stuck_after_s)


def mark_actors(
    inventory: Iterable[Row], stuck_after_s: float, fork_stuck_after_s: float | None = None
) -> list[Row]:
    """The actor inventory, each flagged stuck when busy on one message for `stuck_after_s`
    or more (a fork, on its question: `fork_stuck_after_s`), its texts redacted."""
    rows: list[Row] = []
    for actor in inventory:
        busy = actor.get("busy_s")
        error = actor.get("last_error")
        hand = actor.get("current_message")
        limit = fork_stuck_after_s if actor.get("kind") == "fork" else None
        rows.append(
            actor
            | {
                "stuck": isinstance(busy, int | float) and busy >= (limit or stuck_after_s),
                "last_error": redact_secrets(error)[0] if isinstance(error, str) else None,
                "current_message": redact_secrets(hand)[0] if isinstance(hand, str) else hand,
            }
        )
    return rows


async def overview(service: LiveMemoryService, page: int = 0) -> Row:
    """Page 0 lists the active workspaces, then the first page of the stored ones; later
    pages list stored ones only (DASHBOARD_MAX_WORKSPACES a page)."""
    health = await service.health()
    live = await active_roots(service)
    active = live if page == 0 else []
    size = C.DASHBOARD_MAX_WORKSPACES
    stored, stored_total = await asyncio.to_thread(service.store.page_of_roots, page * size, size)
    today = await asyncio.to_thread(service.stores.usage.today_by_workspace)
    looks = await asyncio.gather(
        *(_inspect(service, root, detail=False, query="") for root in active),
        return_exceptions=True,
    )
    rows: list[Row] = []
    for root, look in zip(active, looks, strict=True):
        if isinstance(look, BaseException):  # passivated meanwhile, or failing: still listed
            logger.debug("dashboard: %s did not answer: %s", root, look)
            rows.append({"workspace": root, "state": "active"})
        else:
            rows.append(look)
    rows.extend(
        {"workspace": str(root), "state": "passivated", "last_activity_at": saved_at}
        for root, saved_at in stored
        if str(root) not in live
    )
    listed = {str(row["workspace"]) for row in rows}
    # A workspace reset or emptied today has no memory left but did spend today: listed, so
    # the rows add up to the totals above them (a later page lists none of these).
    rows.extend(
        {"workspace": root, "state": "emptied"}
        for root in sorted(today)
        if page == 0 and root not in listed and root not in live
    )
    for row in rows:
        row["today"] = today.get(str(row["workspace"]))
    actors = actor_rows(service)
    queues = {
        "mailboxes": sum(int(str(a.get("mailbox_depth", 0))) for a in actors),
        "questions_pending": sum(_queue(r, "pending") for r in rows),
        "questions_in_flight": sum(_queue(r, "in_flight") for r in rows),
        "transcripts": health.get("transcripts"),
    }
    return {
        "health": health,
        "workspaces": rows,
        "workspaces_active": len(live),
        "workspaces_stored": stored_total,
        "page": page,
        "pages": max(1, -(-stored_total // size)),
        "queues": queues,
        "actors": len(actors),
        "stuck_actors": sum(1 for a in actors if a["stuck"]),
    }


def _queue(row: Row, key: str) -> int:
    queue = row.get("queue")
    value = queue.get(key, 0) if isinstance(queue, dict) else 0
    return value if isinstance(value, int) else 0


async def workspace_page(service: LiveMemoryService, root: str, query: str) -> Row:
    """A workspace's page data. Raises UnknownWorkspace for a root with no memory."""
    if root in await active_roots(service):
        try:
            body = await _inspect(service, root, detail=True, query=query)
        except UnknownWorkspace:
            body = None
        if body is not None:
            return body | await _usage(service, root)
    state = await asyncio.to_thread(service.store.load, Path(root))
    if state is None:
        raise UnknownWorkspace(f"no memory for workspace {root}")
    try:
        body = snapshot_detail(root, state, query)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise LiveMemoryError(f"the snapshot of {root} is malformed: {exc}") from None
    return body | await _usage(service, root)


async def _usage(service: LiveMemoryService, root: str) -> Row:
    usage = service.stores.usage
    days = await asyncio.to_thread(usage.by_day, C.DASHBOARD_DAYS, root)
    return {"by_day": days, "all_time": await asyncio.to_thread(usage.all_time, root)}
