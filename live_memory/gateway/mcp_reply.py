"""How a POST /mcp is answered: one JSON body, or an SSE stream.

Streamable HTTP lets the server pick per POST. An SSE stream is needed only for messages sent
before the answer, and the only ones this server sends are progress notifications, which a
client asks for with `params._meta.progressToken`. Every other POST gets its answer as one
`application/json` body: the SSE framing (a task group, a ping task, an event per message on
the server; an event parser on the client) cost about 2 ms of server CPU and 2 ms of the
client's per question.

An SSE stream also carries a ping every 15 s, which keeps a client's HTTP read timer from
expiring on a long answer. A JSON reply sends nothing until the answer, so it is chosen only
while the question's hard backstop (the longest the edge waits before answering with an
error) is within MCP_JSON_REPLY_MAX_WAIT_S, under the shortest read timeout of the clients we
know (the Python SDK's 300 s). With the default MCP timeout (120 s) that always holds.

With SSE, the stream's own listener noticed a client that went away and ended the call (the
question's fork and model calls then stop); the JSON transport listens for nothing, so
`answer_watched` does that for it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from mcp.shared.jsonrpc_dispatcher import progress_token_from_params
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from live_memory.config import constants as C

__all__ = ["answer_watched", "replay", "reply_as_json"]


def reply_as_json(parsed: object, accept: bytes, backstop_s: float) -> bool:
    """Whether a POST whose body parsed to `parsed` (None: not JSON, left to the SDK), sent
    with this Accept header, is answered as one JSON body, questions answered within
    `backstop_s`."""
    return (
        parsed is not None
        and not _asks_for_progress(parsed)
        and _accepts_both(accept)
        and backstop_s <= C.MCP_JSON_REPLY_MAX_WAIT_S
    )


def _asks_for_progress(parsed: object) -> bool:
    """A request in the body (one message or a batch) carries a progressToken."""
    messages = parsed if isinstance(parsed, list) else [parsed]
    for message in messages:
        if isinstance(message, dict):
            params = message.get("params")
            if isinstance(params, Mapping) and progress_token_from_params(params) is not None:
                return True
    return False


def _accepts_both(accept: bytes) -> bool:
    """JSON and SSE (or wildcards for them) are accepted, as streamable HTTP asks: a client
    accepting only one is left to the SSE transport, which refuses it (406) as before."""
    types = {part.split(b";")[0].strip().lower() for part in accept.split(b",")}
    if b"*/*" in types:
        return True
    json = bool(types & {b"application/json", b"application/*"})
    return json and bool(types & {b"text/event-stream", b"text/*"})


async def answer_watched(
    app: ASGIApp, scope: Scope, body: bytes, receive: Receive, send: Send
) -> None:
    """Run `app` on the already-read `body`; a client that disconnects before the response is
    complete cancels it. The app runs in the caller's task (a second task for it, and the
    waits on both, cost a tenth of the JSON way's CPU); a watcher task cancels that task when
    the client goes away, and the cancellation ends here."""
    task = asyncio.current_task()
    assert task is not None
    gone = asyncio.Event()
    finished = False
    cancelled = False

    async def disconnected() -> Message:
        await gone.wait()  # the watcher below is the one reader of the client's messages
        return {"type": "http.disconnect"}

    async def sent(message: Message) -> None:
        nonlocal finished
        await send(message)
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            finished = True

    async def watch() -> None:
        nonlocal cancelled
        while (await receive())["type"] != "http.disconnect":
            pass
        gone.set()
        if not finished:  # the client went away mid-question
            cancelled = True
            task.cancel()

    watcher = asyncio.ensure_future(watch())
    try:
        await app(scope, replay(body, disconnected), sent)
    except asyncio.CancelledError:
        if not cancelled or task.uncancel() > 0:  # not (only) ours: the server's, say
            raise
    finally:
        watcher.cancel()


def replay(body: bytes, then: Receive) -> Receive:
    """A `receive` that yields the already-read body once, then what `then` yields."""
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await then()

    return replayed
