"""`POST /notify` throughput and latency: sequential, then 8 concurrent clients.

The load comes from separate client processes (so the client's own Python does not share the
server's interpreter); each sends small canonical batches (one `change` event) over keep-alive
connections for a fixed number of requests.
"""

from __future__ import annotations

import multiprocessing
import statistics
import tempfile
import time
from pathlib import Path

import httpx

from live_memory.testing.server_process import ServerProcess

REQUESTS_PER_CLIENT = 3000
CLIENTS = 8


def _client(url: str, cwd: str, count: int, queue: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    body = {"cwd": cwd, "events": [{"path": "src/app.py", "kind": "change"}]}
    latencies = []
    with httpx.Client(base_url=url, timeout=10) as client:
        client.post("/notify", json=body).raise_for_status()
        for _ in range(count):
            start = time.perf_counter()
            client.post("/notify", json=body).raise_for_status()
            latencies.append(time.perf_counter() - start)
    queue.put(latencies)


def _run(url: str, cwd: str, clients: int, count: int) -> tuple[float, list[float]]:
    queue: multiprocessing.Queue = multiprocessing.Queue()  # type: ignore[type-arg]
    procs = [
        multiprocessing.Process(target=_client, args=(url, cwd, count, queue))
        for _ in range(clients)
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
        _report("sequential, 1 client", *_run(server.url, str(repo), 1, REQUESTS_PER_CLIENT))
        _report(
            f"concurrent, {CLIENTS} clients",
            *_run(server.url, str(repo), CLIENTS, REQUESTS_PER_CLIENT),
        )


if __name__ == "__main__":
    main()
