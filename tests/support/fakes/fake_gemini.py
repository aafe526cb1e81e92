"""A fake of the Gemini API's generateContent / streamGenerateContent (what Gemini CLI speaks
when GOOGLE_GEMINI_BASE_URL points at it), scripted by a responder: each request is recorded
and answered with the parts the responder returns (text, or function calls)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tests.support.background_server import ServedFake

__all__ = ["FakeGemini", "GeminiRequest"]


@dataclass(frozen=True, slots=True)
class GeminiRequest:
    model: str
    method: str
    """generateContent, streamGenerateContent or countTokens."""
    body: dict[str, Any]

    @property
    def function_names(self) -> list[str]:
        return [
            str(declaration.get("name"))
            for tool in self.body.get("tools") or []
            for declaration in tool.get("functionDeclarations") or []
        ]

    def function_responses(self) -> list[dict[str, Any]]:
        return [
            part["functionResponse"]
            for content in self.body.get("contents") or []
            for part in content.get("parts") or []
            if isinstance(part, dict) and "functionResponse" in part
        ]


Parts = list[dict[str, Any]]


class FakeGemini(ServedFake):
    """`responder(request) -> parts` decides each answer; requests are kept in order."""

    def __init__(self, responder: Callable[[GeminiRequest], Parts]) -> None:
        self.responder = responder
        self.requests: list[GeminiRequest] = []
        self._lock = threading.Lock()
        app = Starlette(routes=[Route("/{path:path}", self._handle, methods=["POST", "GET"])])
        super().__init__(app, "fake Gemini API")

    @property
    def url(self) -> str:
        return self._base_url

    async def _handle(self, request: Request) -> Response:
        tail = request.url.path.rsplit("/", 1)[-1]
        model, _, method = tail.partition(":")
        try:
            body = json.loads(await request.body() or b"{}")
        except ValueError:
            body = {}
        recorded = GeminiRequest(model, method, body if isinstance(body, dict) else {})
        with self._lock:
            self.requests.append(recorded)
        if method == "countTokens":
            return JSONResponse({"totalTokens": 10})
        if method not in ("generateContent", "streamGenerateContent"):
            return JSONResponse({"error": {"code": 404, "message": "not faked"}}, status_code=404)
        answer = {
            "candidates": [
                {
                    "content": {"role": "model", "parts": self.responder(recorded)},
                    "finishReason": "STOP",
                    "index": 0,
                }
            ],
            "usageMetadata": {
                "promptTokenCount": 10,
                "candidatesTokenCount": 5,
                "totalTokenCount": 15,
            },
            "modelVersion": model,
        }
        if method == "generateContent":
            return JSONResponse(answer)
        chunk = f"data: {json.dumps(answer)}\r\n\r\n"
        return StreamingResponse(iter([chunk]), media_type="text/event-stream")
