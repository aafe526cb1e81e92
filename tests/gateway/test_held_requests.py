"""Requests held at their client's pace (`GET /mcp` event streams, half-sent bodies) on a real
server with a small connection cap: a newcomer, `/health` first of all, is served by ending
the oldest of them, never refused."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from tests.support import loopback
from tests.support.fakes import FakeProvider
from tests.support.held_requests import HALF_BODIES, STREAM
from tests.support.server_process import ServerProcess

CAP = 8  # LIVE_MEMORY_MAX_CONNECTIONS of this module's server
REQUEST_TIMEOUT_S = 2.0
WAIT_S = 30.0  # bounds every wait on the server's reply


@pytest.fixture(scope="module")
def capped_server(
    edge_fake: FakeProvider, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerProcess]:
    env = {
        "ANTHROPIC_API_KEY": "dummy-key",
        "ANTHROPIC_BASE_URL": edge_fake.anthropic_base_url,
        "LIVE_MEMORY_MAX_CONNECTIONS": str(CAP),
        "LIVE_MEMORY_REQUEST_TIMEOUT_S": str(REQUEST_TIMEOUT_S),
    }
    with ServerProcess(tmp_path_factory.mktemp("capped"), env) as server:
        yield server


def _open(stack: ExitStack, server: ServerProcess, request: bytes) -> socket.socket:
    sock = stack.enter_context(socket.create_connection(("127.0.0.1", server.port), timeout=10))
    sock.settimeout(WAIT_S)
    sock.sendall(request)
    return sock


def _read_until(sock: socket.socket, marker: bytes) -> bytes:
    data = b""
    while marker not in data:
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    return data


def _waiting(sock: socket.socket) -> bytes | None:
    """What the server has written to this socket so far, left unread (b"" once it closed),
    or None when nothing: the request is still held."""
    sock.setblocking(False)
    try:
        return sock.recv(4096, socket.MSG_PEEK)
    except BlockingIOError:
        return None
    finally:
        sock.settimeout(WAIT_S)


class _Stream:
    """A `GET /mcp` event stream held open; its chunked body is read only to see its end."""

    def __init__(self, stack: ExitStack, server: ServerProcess) -> None:
        self.sock = _open(stack, server, STREAM)
        head, _, self.body = _read_until(self.sock, b"\r\n\r\n").partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200") and b"text/event-stream" in head, head

    def ended(self, *, wait: bool) -> bool:
        """The last chunk arrived (a clean end); with `wait`, wait for it or the close."""
        deadline = time.monotonic() + WAIT_S  # pings (every 15 s) keep a stream talking
        while not self._last_chunk_read() and time.monotonic() < deadline:
            if not wait and _waiting(self.sock) is None:
                return False
            chunk = self.sock.recv(4096)
            if not chunk:
                return False  # closed without a clean end
            self.body += chunk
        return self._last_chunk_read()

    def _last_chunk_read(self) -> bool:
        body = self.body
        while body:
            size, crlf, rest = body.partition(b"\r\n")
            if not crlf:
                return False
            if int(size, 16) == 0:
                return True
            body = rest[int(size, 16) + 2 :]  # a ping: its data and CRLF
        return False


def test_event_streams_at_the_connection_cap_are_shed_oldest_first_for_new_requests(
    capped_server: ServerProcess, edge_repo: Path
) -> None:
    url = capped_server.url
    with ExitStack() as stack:
        # Each stream's head is read: the stream is open (and held) before the next one.
        streams = [_Stream(stack, capped_server) for _ in range(CAP)]
        assert loopback.get(f"{url}/health", timeout=WAIT_S).status_code == 200
        # The oldest stream got the clean end of its response (the last chunk), no reset.
        assert streams[0].ended(wait=True)
        assert not any(stream.ended(wait=False) for stream in streams[1:])
        asked = loopback.post(
            f"{url}/api/ask", json={"question": "q?", "cwd": str(edge_repo)}, timeout=WAIT_S
        )
        assert asked.status_code == 200, asked.text
        # The ended stream's connection, idle now, made room for the question.
        assert streams[0].sock.recv(4096) == b""
        streams.append(_Stream(stack, capped_server))  # at the cap again
        stats = loopback.get(f"{url}/stats", params={"cwd": str(edge_repo)}, timeout=WAIT_S)
        assert stats.status_code == 200, stats.text
        assert streams[1].ended(wait=True)
        assert not any(stream.ended(wait=False) for stream in streams[2:])


def _status(sock: socket.socket) -> int | None:
    try:
        parts = _read_until(sock, b"\r\n").split(b"\r\n", 1)[0].split()
    except ConnectionResetError:
        return None
    return int(parts[1]) if len(parts) > 1 else None


def test_half_sent_bodies_at_the_connection_cap_never_keep_health_from_an_answer(
    capped_server: ServerProcess,
) -> None:
    url = capped_server.url
    rounds = 3 * CAP
    with ExitStack() as stack:
        held = [_open(stack, capped_server, HALF_BODIES[i % 2]) for i in range(CAP)]
        statuses: list[int | None] = []
        for _ in range(rounds):
            assert loopback.get(f"{url}/health", timeout=WAIT_S).status_code == 200
            # Each newcomer sheds the oldest body still arriving: re-open those the server
            # answered, as a client holding the server's connections would.
            for index, sock in enumerate(held):
                if _waiting(sock) is not None:
                    statuses.append(_status(sock))
                    sock.close()
                    held[index] = _open(stack, capped_server, HALF_BODIES[index % 2])
        # A shed body is told why (408), not dropped; the first /health may find the bodies
        # not read yet and close one of them as a silent connection.
        assert len(statuses) >= rounds // 2, statuses
        assert statuses.count(408) >= len(statuses) - 1, statuses
        # Bodies nobody sheds are due within the request timeout like any other.
        assert [_status(sock) for sock in held] == [408] * CAP
