"""`POST /notify` answered by the HTTP protocol itself (gateway/notify_direct) once the edge
holds a handle for the workspace: raw sockets against the real server, so keep-alive,
pipelining, `Connection: close`, a large body, a slow body, a bad body and the Guard are all
seen exactly as a hook or a browser would see them.

The shared edge server runs with LIVE_MEMORY_REQUEST_TIMEOUT_S=2 (see conftest).
"""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import orjson

from live_memory.config import constants as C
from tests.support import loopback
from tests.support.server_process import ServerProcess

REQUEST_TIMEOUT_S = 2.0  # = the edge server's LIVE_MEMORY_REQUEST_TIMEOUT_S
JSON = {"content-type": "application/json"}


def _request(body: bytes, *, extra: bytes = b"") -> bytes:
    return (
        b"POST /notify HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n%s\r\n%s" % (len(body), extra, body)
    )


def _batch(repo: Path, *events: tuple[str, str]) -> bytes:
    return orjson.dumps(
        {"cwd": str(repo), "events": [{"path": p, "kind": "read", "content": c} for p, c in events]}
    )


class _Replies:
    """Reads whole HTTP/1.1 replies (Content-Length framed) off one socket, in order."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock, self.buffer = sock, b""

    def _fill(self) -> bool:
        chunk = self.sock.recv(65536)
        self.buffer += chunk
        return bool(chunk)

    def next(self) -> tuple[int, dict[str, str], bytes]:
        while b"\r\n\r\n" not in self.buffer:
            assert self._fill(), f"closed before a reply: {self.buffer!r}"
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        headers = dict(line.lower().split(": ", 1) for line in lines[1:])
        length = int(headers["content-length"])
        while len(self.buffer) < length:
            assert self._fill(), "closed inside a body"
        body, self.buffer = self.buffer[:length], self.buffer[length:]
        return int(lines[0].split()[1]), headers, body

    def closed(self) -> bool:
        return not self.buffer and not self._fill()


def _connect(server: ServerProcess) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=REQUEST_TIMEOUT_S + 20)
    return sock


def _held(server: ServerProcess, repo: Path) -> None:
    """Create the workspace; the /clear goes through the gateway, which hands the edge the
    workspace's handle, so the notifications after it are answered directly."""
    server.request("POST", "/clear", json={"cwd": str(repo)}).raise_for_status()
    first = server.request(
        "POST", "/notify", content=_batch(repo, ("src/app.py", "A = 1\n")), headers=JSON
    )
    assert first.json() == {"accepted": 1, "ignored": 0}, first.text


def _with_content(server: ServerProcess, repo: Path) -> int:
    stats = server.request("GET", "/stats", params={"cwd": str(repo)}).json()
    return int(stats["file_contexts"]["with_content"])


def test_each_notification_is_applied_before_the_next_request_sees_the_workspace(
    edge_server: ServerProcess, edge_repo: Path
) -> None:
    _held(edge_server, edge_repo)
    before = _with_content(edge_server, edge_repo)
    with loopback.client(base_url=edge_server.url, timeout=30) as client:
        for i in range(20):
            body = _batch(edge_repo, (f"gen/f{i}.py", f"VALUE_{i} = {i}\n"))
            reply = client.post("/notify", content=body, headers=JSON)
            assert reply.status_code == 200 and reply.json() == {"accepted": 1, "ignored": 0}
            assert _with_content(edge_server, edge_repo) == before + i + 1


def _processed(server: ServerProcess, repo: Path) -> int:
    """Messages the workspace actor has handled (`/actors` reads the inventory: unlike
    /stats, asking it sends the workspace nothing, so it flushes no gathered notification)."""
    rows = server.request("GET", "/actors").json()
    mine = [r for r in rows if r["kind"] == "workspace" and r["workspace"] == str(repo)]
    assert len(mine) == 1, rows
    return int(mine[0]["processed"])


def test_a_gathered_notification_reaches_its_workspace_with_no_later_request(
    edge_server: ServerProcess, edge_repo: Path
) -> None:
    """Notifications for a held workspace wait on the event loop for a few milliseconds to
    be told together (gateway/notify_batch); nobody has to ask for them to be applied."""
    _held(edge_server, edge_repo)
    before = _processed(edge_server, edge_repo)
    body = _batch(edge_repo, ("gen/alone.py", "ALONE = 1\n"))
    assert edge_server.request("POST", "/notify", content=body, headers=JSON).status_code == 200
    deadline = time.monotonic() + 30
    while _processed(edge_server, edge_repo) == before:  # the batch's timer, not a request
        assert time.monotonic() < deadline, "the gathered notification was never told"
        time.sleep(0.01)


def test_a_pipelined_burst_is_seen_whole_by_the_request_behind_it(
    edge_server: ServerProcess, edge_repo: Path
) -> None:
    """A burst gathered into one batch (over the event cap, too) and a /stats pipelined
    right behind it on the same connection: the /stats is answered after every one."""
    _held(edge_server, edge_repo)
    before = _with_content(edge_server, edge_repo)
    count = C.NOTIFY_BATCH_MAX_EVENTS + 10
    burst = b"".join(
        _request(_batch(edge_repo, (f"burst/f{i}.py", f"B_{i} = {i}\n"))) for i in range(count)
    )
    stats = b"GET /stats?cwd=%s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % str(edge_repo).encode()
    with _connect(edge_server) as sock:
        sock.sendall(burst + stats)
        replies = _Replies(sock)
        for _ in range(count):
            assert replies.next()[::2] == (200, b'{"accepted":1,"ignored":0}')
        status, _, body = replies.next()
    assert status == 200
    assert json.loads(body)["file_contexts"]["with_content"] == before + count


def test_keep_alive_pipelining_and_connection_close(
    edge_server: ServerProcess, edge_repo: Path
) -> None:
    _held(edge_server, edge_repo)
    one = _request(_batch(edge_repo, ("src/a.py", "A = 1\n")))
    two = _request(_batch(edge_repo, ("src/b.py", "B = 2\n"), ("src/c.py", "C = 3\n")))
    health = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    with _connect(edge_server) as sock:
        replies = _Replies(sock)
        sock.sendall(one)
        assert replies.next()[::2] == (200, b'{"accepted":1,"ignored":0}')
        sock.sendall(one + two + health)  # pipelined: answered in order
        assert replies.next()[::2] == (200, b'{"accepted":1,"ignored":0}')
        assert replies.next()[::2] == (200, b'{"accepted":2,"ignored":0}')
        status, _, body = replies.next()
        assert status == 200 and "status" in json.loads(body)
        sock.sendall(
            _request(_batch(edge_repo, ("src/d.py", "D = 4\n")), extra=b"Connection: close\r\n")
        )
        status, headers, _ = replies.next()
        assert status == 200 and headers.get("connection") == "close"
        assert replies.closed()


def test_a_body_larger_than_the_head_limit_keeps_the_connection_usable(
    edge_server: ServerProcess, edge_repo: Path
) -> None:
    """Head bytes are counted per head: a big body answered in the same read as its head
    must not count against the next request's head."""
    _held(edge_server, edge_repo)
    big = "X = 1\n" * (2 * C.MAX_HEADER_BYTES // 6)
    with _connect(edge_server) as sock:
        replies = _Replies(sock)
        for name in ("src/big1.py", "src/big2.py"):
            sock.sendall(_request(_batch(edge_repo, (name, big))))
            assert replies.next()[::2] == (200, b'{"accepted":1,"ignored":0}')


def test_a_slow_body_is_408_and_a_bad_body_gets_the_routes_error(
    edge_server: ServerProcess, edge_repo: Path
) -> None:
    _held(edge_server, edge_repo)
    with _connect(edge_server) as sock:
        sock.sendall(_request(b'{"cwd": "' + b" " * 50)[:-20])  # the body never completes
        status, _, body = _Replies(sock).next()
        assert status == 408 and b"LIVE_MEMORY_REQUEST_TIMEOUT_S" in body
    cases = {
        b"not json": 422,
        orjson.dumps({"cwd": str(edge_repo), "events": [{"path": "a.py", "kind": "x"}]}): 422,
        orjson.dumps({"cwd": str(edge_repo), "events": [{}] * (C.MAX_NOTIFY_EVENTS + 1)}): 413,
    }
    for body, expected in cases.items():
        reply = edge_server.request("POST", "/notify", content=body, headers=JSON)
        assert reply.status_code == expected, reply.text
        assert isinstance(reply.json()["error"], str)


def test_the_guard_still_refuses_browser_requests_for_a_held_workspace(
    edge_server: ServerProcess, edge_repo: Path
) -> None:
    _held(edge_server, edge_repo)
    before = _with_content(edge_server, edge_repo)
    body = _batch(edge_repo, ("src/evil.py", "EVIL = 1\n"))
    shapes = {
        b"Origin: http://localhost:1\r\n": 403,
        b"Sec-Fetch-Site: cross-site\r\n": 403,
        b"Host: evil.example\r\n": 400,  # a second Host
    }
    for extra, expected in shapes.items():
        with _connect(edge_server) as sock:
            sock.sendall(_request(body, extra=extra))
            assert _Replies(sock).next()[0] == expected, extra
    plain = (
        b"POST /notify HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\n"
        b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
    )
    with _connect(edge_server) as sock:
        sock.sendall(plain)
        assert _Replies(sock).next()[0] == 415
    assert _with_content(edge_server, edge_repo) == before


def test_this_servers_own_origin_passes_on_both_paths(
    edge_server: ServerProcess, edge_repo: Path
) -> None:
    """The connection's addresses are looked up only when needed: an Origin naming this very
    server (its port) passes the Guard on the direct path and on uvicorn's, both of which must
    then know the listening port; the same origin on another port is refused."""
    _held(edge_server, edge_repo)
    before = _with_content(edge_server, edge_repo)
    own = b"Origin: http://127.0.0.1:%d\r\n" % edge_server.port
    other = b"Origin: http://127.0.0.1:%d\r\n" % (edge_server.port % 60000 + 1)
    body = _batch(edge_repo, ("src/own.py", "OWN = 1\n"))
    with _connect(edge_server) as sock:
        replies = _Replies(sock)
        sock.sendall(_request(body, extra=own))  # direct
        assert replies.next()[::2] == (200, b'{"accepted":1,"ignored":0}')
        sock.sendall(_request(body, extra=other))
        assert replies.next()[0] == 403
    with _connect(edge_server) as sock:
        sock.sendall(
            b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n%s\r\n" % own  # uvicorn's path
        )
        assert _Replies(sock).next()[0] == 200
    with _connect(edge_server) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n%s\r\n" % other)
        assert _Replies(sock).next()[0] == 403
    assert _with_content(edge_server, edge_repo) == before + 1
