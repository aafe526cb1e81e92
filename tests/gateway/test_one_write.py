"""A response's head goes out with the first write of its body, in one send; a head no body
follows within the loop's turn goes out alone at the next; closing sends what is held first.
On a recording transport under a real event loop, and through uvicorn on the real server."""

from __future__ import annotations

import asyncio
from typing import Any

from live_memory.gateway.one_write import HeadWithBody
from tests.support import loopback
from tests.support.server_process import ServerProcess


class _Recording(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.sent: list[bytes] = []
        self.closed = False

    def write(self, data: Any) -> None:
        self.sent.append(bytes(data))

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 1)}.get(name, default)


def _run(script: Any) -> _Recording:
    async def main() -> _Recording:
        transport = _Recording()
        await script(HeadWithBody(transport, asyncio.get_running_loop()), transport)
        return transport

    return asyncio.run(main())


def test_head_and_body_go_out_in_one_send() -> None:
    async def script(one: HeadWithBody, transport: _Recording) -> None:
        one.write(b"HTTP/1.1 200 OK\r\n\r\n")
        assert transport.sent == []  # held
        one.write(b"body")
        one.write(b"more")
        await asyncio.sleep(0)  # the turn's flush finds nothing left to send

    assert _run(script).sent == [b"HTTP/1.1 200 OK\r\n\r\nbody", b"more"]


def test_a_head_alone_goes_out_at_the_next_turn() -> None:
    async def script(one: HeadWithBody, transport: _Recording) -> None:
        one.write(b"HTTP/1.1 200 OK\r\n\r\n")
        await asyncio.sleep(0)
        assert transport.sent == [b"HTTP/1.1 200 OK\r\n\r\n"]
        one.write(b"event")  # a stream's first event, later: on its own

    assert _run(script).sent == [b"HTTP/1.1 200 OK\r\n\r\n", b"event"]


def test_closing_sends_the_held_head_first() -> None:
    async def script(one: HeadWithBody, transport: _Recording) -> None:
        one.write(b"HTTP/1.1 204 No Content\r\n\r\n")
        one.close()
        await asyncio.sleep(0)  # no second copy from the turn's flush

    recorded = _run(script)
    assert recorded.sent == [b"HTTP/1.1 204 No Content\r\n\r\n"]
    assert recorded.closed


def test_everything_else_is_the_connections_transport() -> None:
    async def script(one: HeadWithBody, transport: _Recording) -> None:
        assert one.get_extra_info("peername") == ("127.0.0.1", 1)
        assert not one.is_closing()
        transport.close()
        assert one.is_closing()

    _run(script)


def test_responses_through_uvicorn_are_whole(edge_server: ServerProcess) -> None:
    # Keep-alive requests on one connection: each response's head and body arrive intact.
    with loopback.client(timeout=30) as client:
        for _ in range(3):
            response = client.get(f"{edge_server.url}/health")
            assert response.status_code == 200
            assert response.json()["status"]
            missing = client.get(f"{edge_server.url}/no-such-route")
            assert missing.status_code == 404
