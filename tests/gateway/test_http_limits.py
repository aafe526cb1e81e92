"""Connection-level abuse on real loopback sockets: header floods, idle and half-sent
connections, slow bodies (MCP included). The server must keep bounded memory per
connection, answer 431/408, and keep /health and parsed requests served throughout.

The shared edge server runs with LIVE_MEMORY_REQUEST_TIMEOUT_S=2 (see conftest).
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest

from live_memory.config import constants as C
from tests.support import loopback
from tests.support.fakes import FakeProvider, Text
from tests.support.server_process import ServerProcess

REQUEST_TIMEOUT_S = 2.0  # = the edge server's LIVE_MEMORY_REQUEST_TIMEOUT_S
HEAD = b"POST /notify HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
MIB = 1024 * 1024


def _rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def _connect(server: ServerProcess) -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.port), timeout=10)


def _status_of(sock: socket.socket) -> int | None:
    """The status of the server's reply, None when it closed without one."""
    reply = b""
    try:
        while b"\r\n" not in reply:
            chunk = sock.recv(4096)
            if not chunk:
                break
            reply += chunk
    except ConnectionResetError:
        pass
    parts = reply.split(b"\r\n", 1)[0].split()
    return int(parts[1]) if len(parts) > 1 else None


FLOODS = {
    "one unterminated header line": (HEAD + b"X-Flood: ", b"a" * MIB),
    "endless small headers": (HEAD, b"X-Flood: a\r\n" * (MIB // 12)),
    "endless request line": (b"GET /", b"a" * MIB),
}


@pytest.mark.parametrize("shape", FLOODS)
def test_a_256_mib_header_flood_is_cut_off_and_memory_stays_flat(
    edge_server: ServerProcess, shape: str
) -> None:
    assert edge_server.proc is not None
    head, chunk = FLOODS[shape]
    before = _rss_bytes(edge_server.proc.pid)
    sent = 0
    with _connect(edge_server) as sock:
        try:
            sock.sendall(head)
            while sent < 256 * MIB:
                sock.sendall(chunk)
                sent += len(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server hung up on us: what it should do
    grown = _rss_bytes(edge_server.proc.pid) - before
    assert sent < 256 * MIB, "the server read the whole flood"
    assert grown < 32 * MIB, grown
    assert loopback.get(f"{edge_server.url}/health", timeout=10).status_code == 200


@pytest.mark.parametrize("shape", FLOODS)
def test_a_head_over_the_limit_is_answered_431(edge_server: ServerProcess, shape: str) -> None:
    head, chunk = FLOODS[shape]
    over = (head + chunk)[: C.MAX_HEADER_BYTES + 4096]
    with _connect(edge_server) as sock:
        sock.sendall(over)
        assert _status_of(sock) == 431


def test_a_head_just_under_the_limit_is_served(edge_server: ServerProcess) -> None:
    padding = "a" * (C.MAX_HEADER_BYTES - 1024)
    response = loopback.get(f"{edge_server.url}/health", headers={"x-pad": padding}, timeout=10)
    assert response.status_code == 200


HALF_SENT = {
    "nothing at all": b"",
    "half a request head": HEAD + b"Content-Le",
    "half a REST body": HEAD + b'Content-Length: 100\r\n\r\n{"cwd": ',
    "half an MCP body": (
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n"
        b'{"jsonrpc": "2.0", '
    ),
}


@pytest.mark.parametrize("shape", HALF_SENT)
def test_a_request_that_never_arrives_is_answered_408_within_the_request_timeout(
    edge_server: ServerProcess, shape: str
) -> None:
    with _connect(edge_server) as sock:
        sock.settimeout(REQUEST_TIMEOUT_S + 10)  # the wait is on the server's reply
        sock.sendall(HALF_SENT[shape])
        assert _status_of(sock) == 408


def test_600_idle_and_half_sent_connections_starve_neither_health_nor_parsed_requests(
    edge_server: ServerProcess, edge_fake: FakeProvider, edge_repo: Path
) -> None:
    url, cwd = edge_server.url, str(edge_repo)
    event = {"path": "src/app.py", "kind": "read", "content": "def answer():\n    return 42\n"}
    warm = loopback.post(f"{url}/notify", json={"cwd": cwd, "events": [event]}, timeout=10)
    assert warm.status_code == 200, warm.text
    release = threading.Event()
    edge_fake.responder = lambda recorded: Text(
        "slow answer", delay_s=0.0 if release.wait(30) else 0
    )
    answered: list[httpx.Response] = []
    asking = threading.Thread(
        target=lambda: answered.append(
            loopback.post(f"{url}/api/ask", json={"question": "q?", "cwd": cwd}, timeout=60)
        )
    )
    asking.start()
    edge_fake.wait_for_requests(1, timeout_s=30)  # the question is parsed and in flight
    with ExitStack() as stack:
        held = [stack.enter_context(_connect(edge_server)) for _ in range(600)]
        for sock in held[::2]:
            sock.sendall(HALF_SENT["half a request head"])
        for _ in range(3):
            assert loopback.get(f"{url}/health", timeout=10).status_code == 200
            notify = loopback.post(f"{url}/notify", json={"cwd": cwd, "events": []}, timeout=10)
            assert notify.status_code == 200, notify.text
        release.set()
        asking.join(timeout=60)
        assert [r.status_code for r in answered] == [200], [r.text for r in answered]
        # Every held connection is closed by the server (shed at the cap or timed out):
        # none is kept open forever.
        for sock in held:
            sock.settimeout(REQUEST_TIMEOUT_S + 10)
            assert _status_of(sock) in (408, None)


DRIBBLED = {
    "REST": b"POST /api/ask HTTP/1.1\r\n",
    "MCP": b"POST /mcp HTTP/1.1\r\nAccept: application/json, text/event-stream\r\n",
    "notify": b"POST /notify HTTP/1.1\r\n",
}


@pytest.mark.parametrize("kind", DRIBBLED)
def test_a_dribbled_request_is_answered_408_within_the_request_timeout_of_its_first_byte(
    edge_server: ServerProcess, kind: str
) -> None:
    head = DRIBBLED[kind] + b"Host: 127.0.0.1\r\nContent-Type: application/json\r\n"
    head += b"Content-Length: 1000\r\n\r\n"
    step = 0.1
    pieces = [head[i : i + 8] for i in range(0, len(head), 8)]
    # The head takes most of the timeout: counted from the end of the head, the body would
    # get a whole timeout more.
    every = 0.8 * REQUEST_TIMEOUT_S / len(pieces)
    with _connect(edge_server) as sock:
        started = time.monotonic()
        for piece in pieces:
            sock.sendall(piece)
            time.sleep(every)  # the dribble itself, not a wait on the server
        sock.setblocking(False)
        reply = b""
        while b"\r\n" not in reply and time.monotonic() - started < 10 * REQUEST_TIMEOUT_S:
            with contextlib.suppress(BlockingIOError):
                sock.send(b" ")
            time.sleep(step)
            with contextlib.suppress(BlockingIOError):
                reply += sock.recv(4096) or b"\r\n"
        elapsed = time.monotonic() - started
    assert reply.startswith(b"HTTP/1.1 408"), reply
    assert elapsed < 1.5 * REQUEST_TIMEOUT_S, elapsed
