"""Requests a client can hold open on the server (raw HTTP/1.1 bytes): an MCP event stream,
and bodies sent only in part. The connection-cap tests and bench/connection_flood.py hold them."""

from __future__ import annotations

__all__ = ["HALF_BODIES", "STREAM"]

HOST = b"Host: 127.0.0.1\r\n"
STREAM = b"GET /mcp HTTP/1.1\r\n" + HOST + b"Accept: text/event-stream\r\n\r\n"
"""A `GET /mcp` event stream: held open by the server, pinged, until the client leaves."""
HALF_BODIES = (
    b"POST /api/ask HTTP/1.1\r\n" + HOST + b"Content-Type: application/json\r\n"
    b'Content-Length: 100\r\n\r\n{"question": ',
    b"POST /mcp HTTP/1.1\r\n" + HOST + b"Content-Type: application/json\r\n"
    b"Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n"
    b'{"jsonrpc": "2.0", ',
)
"""Bodies that announce 100 bytes and send a few: REST and MCP."""
