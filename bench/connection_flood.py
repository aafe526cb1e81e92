"""Held connections against /health: event streams, half-sent bodies, one dribbled body.

One real `live-memory serve` on loopback. Each scenario holds HELD sockets open (re-opening
each one the server closes, as an attacker would) while 50 `/health` probes, each on a new
connection with a 5 s limit, are counted; then the held sockets are dropped.

- streams: `GET /mcp` event streams (the server pings them every 15 s);
- bodies: `POST /api/ask` / `POST /mcp` heads with half of their declared body;
- dribble: one `POST /api/ask` whose head takes 9 s and whose body comes a byte every 0.5 s:
  seconds from its first byte until its 408.

Bounded: at most HELD sockets at a time, at most REOPEN_MAX re-opens, a deadline per scenario.

    .venv/bin/python bench/connection_flood.py [--streams 700] [--bodies 600]
"""

from __future__ import annotations

import argparse
import selectors
import socket
import tempfile
import threading
import time
from pathlib import Path

import _repo_root  # noqa: F401 (puts the repository root on sys.path for tests.support)
import httpx

from tests.support.held_requests import HALF_BODIES, STREAM
from tests.support.server_process import ServerProcess

PROBES = 50
PROBE_TIMEOUT_S = 5.0
REOPEN_MAX = 20_000
DEADLINE_S = 120.0
DRIBBLE_EVERY_S = 0.5
DRIBBLE_HEAD_S = 9.0


class Holder:
    """HELD sockets, each re-opened (same request) when the server closes it."""

    def __init__(self, port: int, requests: tuple[bytes, ...], count: int) -> None:
        self.port, self.requests, self.count = port, requests, count
        self.selector = selectors.DefaultSelector()
        self.reopened = 0
        self.refused = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _open(self, index: int) -> None:
        try:
            sock = socket.create_connection(("127.0.0.1", self.port), timeout=5)
            sock.sendall(self.requests[index % len(self.requests)])
        except OSError:
            self.refused += 1
            return
        sock.setblocking(False)
        self.selector.register(sock, selectors.EVENT_READ, index)

    def start(self) -> Holder:
        for index in range(self.count):
            self._open(index)
        self.thread.start()
        return self

    def _run(self) -> None:
        while not self.stop.is_set():
            for key, _ in self.selector.select(timeout=0.2):
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                try:
                    data = sock.recv(65536)
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError:
                    data = b""
                if data:
                    continue  # a stream's head or ping: still held
                self.selector.unregister(sock)
                sock.close()
                if self.reopened < REOPEN_MAX and not self.stop.is_set():
                    self.reopened += 1
                    self._open(key.data)

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=10)
        for key in list(self.selector.get_map().values()):
            sock = key.fileobj
            assert isinstance(sock, socket.socket)
            sock.close()
        self.selector.close()


def _probe(url: str) -> tuple[int, list[float], dict[str, int]]:
    ok, times, failures = 0, [], {}
    deadline = time.monotonic() + DEADLINE_S
    for _ in range(PROBES):
        if time.monotonic() > deadline:
            break
        started = time.monotonic()
        try:
            # A new connection per probe: a client arriving while the sockets are held.
            status = httpx.get(f"{url}/health", timeout=PROBE_TIMEOUT_S).status_code
            ok += status == 200
            if status != 200:
                failures[str(status)] = failures.get(str(status), 0) + 1
        except httpx.HTTPError as exc:
            failures[type(exc).__name__] = failures.get(type(exc).__name__, 0) + 1
        times.append(time.monotonic() - started)
        time.sleep(0.1)
    return ok, times, failures


def _held(server: ServerProcess, name: str, requests: tuple[bytes, ...], count: int) -> None:
    holder = Holder(server.port, requests, count).start()
    time.sleep(1.0)  # every request parsed and waiting
    try:
        ok, times, failures = _probe(server.url)
    finally:
        holder.close()
    times.sort()
    slowest = times[-1] if times else 0.0
    median = times[len(times) // 2] if times else 0.0
    print(
        f"{name:8} held={count:4} /health ok {ok}/{PROBES}  median {median:.3f} s  "
        f"slowest {slowest:.2f} s  "
        f"held sockets closed by the server (re-opened) {holder.reopened}, refused {holder.refused}"
        + (f"  failures {failures}" if failures else "")
    )


def _dribble(server: ServerProcess) -> None:
    head = HALF_BODIES[0].split(b"\r\n\r\n")[0] + b"\r\n\r\n"
    pieces = [head[i : i + 6] for i in range(0, len(head), 6)]
    started = time.monotonic()
    reply = b""
    with socket.create_connection(("127.0.0.1", server.port), timeout=DEADLINE_S) as sock:
        sock.setblocking(False)
        for piece in [*pieces, *[b" "] * int(DEADLINE_S / DRIBBLE_EVERY_S)]:
            try:
                sock.send(piece)
                time.sleep(DRIBBLE_HEAD_S / len(pieces) if len(piece) > 1 else DRIBBLE_EVERY_S)
                chunk = sock.recv(4096)
            except BlockingIOError:
                continue
            except OSError:
                break
            reply += chunk
            if not chunk or b"\r\n" in reply:
                break
    status = reply.split(b"\r\n", 1)[0].decode(errors="replace") or "closed without a reply"
    print(
        f"dribble  head over {DRIBBLE_HEAD_S:g} s, then a byte every {DRIBBLE_EVERY_S} s: "
        f"{status} after {time.monotonic() - started:.1f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--streams", type=int, default=700)
    parser.add_argument("--bodies", type=int, default=600)
    parser.add_argument("--skip-dribble", action="store_true")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, ServerProcess(Path(tmp), {}) as server:
        _held(server, "streams", (STREAM,), options.streams)
        time.sleep(2.0)
        _held(server, "bodies", HALF_BODIES, options.bodies)
        if not options.skip_dribble:
            _dribble(server)


if __name__ == "__main__":
    main()
