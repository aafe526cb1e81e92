"""`POST /notify` throughput and latency: sequential, then 8 concurrent connections.

The load generator is deliberately lean (pre-built HTTP/1.1 requests over raw keep-alive
sockets, in separate processes) so the figures measure the server, not a heavyweight client
sharing its two cores. Each request is one small canonical batch (one `change` event).
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import statistics
import tempfile
import time
from pathlib import Path

import _repo_root  # noqa: F401 (puts the repository root on sys.path for tests.support)

from tests.support.server_process import ServerProcess

REQUESTS_PER_CONNECTION = 3000
PROCESSES = 2
CONNECTIONS_PER_PROCESS = 4


async def _connection(port: int, request: bytes, count: int, latencies: list[float]) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    for _ in range(count):
        start = time.perf_counter()
        writer.write(request)
        head = await reader.readuntil(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 200"):
            raise RuntimeError(head.decode(errors="replace"))
        at = head.lower().index(b"content-length:") + len(b"content-length:")
        await reader.readexactly(int(head[at : head.index(b"\r\n", at)]))
        latencies.append(time.perf_counter() - start)
    writer.close()


def _client(
    port: int, cwd: str, connections: int, count: int, queue: multiprocessing.Queue
) -> None:  # type: ignore[type-arg]
    body = json.dumps({"cwd": cwd, "events": [{"path": "src/app.py", "kind": "change"}]})
    request = (
        f"POST /notify HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n{body}"
    ).encode()
    latencies: list[float] = []

    async def run() -> None:
        await asyncio.gather(
            *(_connection(port, request, count, latencies) for _ in range(connections))
        )

    asyncio.run(run())
    queue.put(latencies)


def _run(port: int, cwd: str, processes: int, connections: int) -> tuple[float, list[float]]:
    queue: multiprocessing.Queue = multiprocessing.Queue()  # type: ignore[type-arg]
    procs = [
        multiprocessing.Process(
            target=_client, args=(port, cwd, connections, REQUESTS_PER_CONNECTION, queue)
        )
        for _ in range(processes)
    ]
    start = time.perf_counter()
    for proc in procs:
        proc.start()
    results = [queue.get(timeout=300) for _ in procs]
    elapsed = time.perf_counter() - start
    for proc in procs:
        proc.join(timeout=30)
    latencies = [x for r in results for x in r]
    return len(latencies) / elapsed, latencies


def _report(label: str, rate: float, latencies: list[float]) -> None:
    ordered = sorted(latencies)
    p99 = ordered[int(0.99 * len(ordered)) - 1]
    print(
        f"{label}: {rate:,.0f} req/s, p50 {1000 * statistics.median(ordered):.2f} ms, "
        f"p99 {1000 * p99:.2f} ms ({len(ordered)} requests)"
    )


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="lm-notify-"))
    repo = tmp / "repo"
    (repo / "src").mkdir(parents=True)
    with ServerProcess(tmp / "data", {}) as server:
        # A notification alone creates no workspace; a clear does (the bench measures the
        # live workspace's path, not the ignored one).
        server.request("POST", "/clear", json={"cwd": str(repo)}).raise_for_status()
        _run(server.port, str(repo), 1, 1)  # warm-up: first connections
        _report("sequential, 1 connection", *_run(server.port, str(repo), 1, 1))
        total = PROCESSES * CONNECTIONS_PER_PROCESS
        _report(
            f"concurrent, {total} connections",
            *_run(server.port, str(repo), PROCESSES, CONNECTIONS_PER_PROCESS),
        )


if __name__ == "__main__":
    main()
