"""Checks on a JSON-RPC message the MCP SDK would get wrong, made before it sees the body.

The SDK treats a request whose `id` is an object, array, float or boolean as a notification
(202, no answer: the caller waits forever), and echoes an unknown method name back in full
(a 100k-character name came back as a 100 kB error). Both are answered here with a proper
JSON-RPC error (`id: null` when the id itself is the problem) that never repeats more than
JSONRPC_ECHO_MAX_CHARS of the caller's input.
"""

from __future__ import annotations

from typing import Any

from live_memory.config import constants as C

__all__ = ["INVALID_REQUEST", "jsonrpc_problem"]

INVALID_REQUEST = -32600
_JSON_TYPES = {dict: "an object", list: "an array", bool: "a boolean", type(None): "null"}


def _shown(text: str) -> str:
    limit = C.JSONRPC_ECHO_MAX_CHARS
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


def _error(message_id: object, text: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": message_id,
        "error": {"code": INVALID_REQUEST, "message": f"Invalid Request: {text}"},
    }


def _valid_id(value: object) -> bool:
    # MCP: "a string or integer"; JSON-RPC's null is for errors only.
    return isinstance(value, str | int) and not isinstance(value, bool)


def _problem(message: object) -> dict[str, Any] | None:
    if not isinstance(message, dict):
        return None  # not ours to judge: the SDK answers shapes it does not know
    if "id" in message and not _valid_id(message["id"]):
        kind = _JSON_TYPES.get(type(message["id"]), "a fractional number")
        return _error(None, f"id must be a string or an integer, not {kind}")
    message_id = message.get("id")
    method = message.get("method")
    if "method" in message and not isinstance(method, str):
        return _error(message_id, "method must be a string")
    if isinstance(method, str) and len(method) > C.JSONRPC_METHOD_MAX_CHARS:
        return _error(
            message_id,
            f"method name is {len(method)} characters (at most {C.JSONRPC_METHOD_MAX_CHARS}): "
            f"{_shown(method)!r}",
        )
    return None


def jsonrpc_problem(parsed: object) -> dict[str, Any] | None:
    """The JSON-RPC error answer for a parsed body the SDK would mishandle, else None (let the
    SDK answer it; pass None for a body that is not JSON)."""
    if isinstance(parsed, list):  # a batch is refused whole for its first bad member
        problem = next((p for p in map(_problem, parsed) if p is not None), None)
        if problem is not None:
            problem["id"] = None
        return problem
    return _problem(parsed)
