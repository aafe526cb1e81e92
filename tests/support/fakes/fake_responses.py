"""A fake of the OpenAI Responses API's streaming `POST /v1/responses` (what Codex speaks),
scripted by a responder: each request is recorded and answered, as server-sent events, with
the output items the responder returns (an assistant message, or function calls)."""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tests.support.background_server import ServedFake

__all__ = ["FakeResponses", "ResponsesRequest", "call", "message"]


@dataclass(frozen=True, slots=True)
class ResponsesRequest:
    body: dict[str, Any]

    @property
    def tool_names(self) -> list[str]:
        names = []
        for tool in self.body.get("tools") or []:
            names.append(str(tool.get("name")))
            names += [str(t.get("name")) for t in tool.get("tools") or []]  # namespaces
        return names

    def namespace_of(self, name: str) -> str | None:
        """The namespace whose tools include `name` (Codex groups an MCP server's tools so)."""
        for tool in self.body.get("tools") or []:
            if any(t.get("name") == name for t in tool.get("tools") or []):
                return str(tool.get("name"))
        return None

    def items(self, kind: str) -> list[dict[str, Any]]:
        return [
            item
            for item in self.body.get("input") or []
            if isinstance(item, dict) and item.get("type") == kind
        ]


Item = dict[str, Any]


def message(text: str) -> Item:
    content = [{"type": "output_text", "text": text, "annotations": []}]
    return {"type": "message", "role": "assistant", "content": content}


def call(name: str, arguments: dict[str, Any], call_id: str, namespace: str | None = None) -> Item:
    item = {"type": "function_call", "name": name, "arguments": json.dumps(arguments)}
    item["call_id"] = call_id
    return item | ({"namespace": namespace} if namespace else {})


class FakeResponses(ServedFake):
    """`responder(request) -> items` decides each answer; requests are kept in order."""

    def __init__(self, responder: Callable[[ResponsesRequest], list[Item]]) -> None:
        self.responder = responder
        self.requests: list[ResponsesRequest] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        routes = [
            Route("/v1/responses", self._responses, methods=["POST"]),
            Route("/v1/models", self._models, methods=["GET"]),
        ]
        super().__init__(Starlette(routes=routes), "fake Responses API")

    @property
    def url(self) -> str:
        return f"{self._base_url}/v1"

    async def _models(self, request: Request) -> Response:
        return JSONResponse({"object": "list", "data": []})

    async def _responses(self, request: Request) -> Response:
        try:
            body = json.loads(await request.body() or b"{}")
        except ValueError:
            body = {}
        recorded = ResponsesRequest(body if isinstance(body, dict) else {})
        with self._lock:
            self.requests.append(recorded)
            number = next(self._ids)
        items = self.responder(recorded)
        return StreamingResponse(
            self._events(f"resp_{number}", items), media_type="text/event-stream"
        )

    def _events(self, response_id: str, items: list[Item]) -> Iterator[str]:
        def event(kind: str, **fields: Any) -> str:
            return f"event: {kind}\ndata: {json.dumps({'type': kind, **fields})}\n\n"

        shell = {"id": response_id, "object": "response", "status": "in_progress", "output": []}
        yield event("response.created", response=shell)
        for index, item in enumerate(items):
            done = {"id": f"item_{response_id}_{index}", "status": "completed", **item}
            yield event("response.output_item.added", output_index=index, item=done)
            yield event("response.output_item.done", output_index=index, item=done)
        usage = {
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 15,
        }
        final = {**shell, "status": "completed", "usage": usage}
        yield event("response.completed", response=final)
