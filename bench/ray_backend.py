"""The Ray backend against the local one, on this machine: per-question overhead, `/notify`
throughput, parallel-question (fork) throughput, and the time to restore a workspace actor:
killed by its pid, passivated when idle, and lost with its node (a second raylet killed).

Both backends serve the same scripted fake provider (tests/support, real HTTP, instant
replies), so a question's latency is the server's own path: on `ray` that adds the hop to the
workspace actor's process and back (and a snapshot write per notification batch, which the
Ray host makes durable before it acknowledges). The Ray cluster is a real single-node one
(`ray start --head`, 1 CPU, no dashboard). Figures from a shared 2-core machine are noisy.

On `ray` every fork is a Ray task in a worker process (the window copy crosses the object
store); the fork figure asks PARALLEL questions at once on one workspace, with the fake
replying after FORK_REPLY_S, so it shows how much of that overlap each backend keeps.

    .venv/bin/python bench/ray_backend.py [--questions N] [--notifies N] [--forks N]
"""

from __future__ import annotations

import argparse
import itertools
import os
import signal
import statistics
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import _repo_root  # noqa: F401 (puts the repository root on sys.path for tests.support)
import httpx

from live_memory.ray_backend import checkout_resource, choose_node
from tests.support.fakes import FakeProvider, Text
from tests.support.ray_cluster import RayCluster
from tests.support.repo import make_repo
from tests.support.server_process import ServerProcess

FILES = {"src/app.py": "def answer():\n    return 42\n", "README.md": "# bench\n"}
NOTIFY_THREADS = 4
PARALLEL = 4  # questions at once on one workspace (LIVE_MEMORY_MAX_PARALLEL_QUERIES default)
FORK_REPLY_S = 0.5  # the fake model's reply time in the fork figure
IDLE_S = 2.0  # the passivation time of the idle gateway's actors
PATIENCE_S = 300.0


def _ask(client: httpx.Client, repo: Path, question: str) -> float:
    start = time.perf_counter()
    reply = client.post("/api/ask", json={"question": question, "cwd": str(repo)})
    if reply.status_code != 200:
        raise RuntimeError(reply.text)
    return time.perf_counter() - start


def _notify_rate(url: str, repo: Path, count: int) -> float:
    body = {"cwd": str(repo), "events": [{"path": "src/app.py", "kind": "change"}]}

    def worker(n: int) -> None:
        with httpx.Client(base_url=url, timeout=120) as client:
            for _ in range(n):
                client.post("/notify", json=body).raise_for_status()

    start = time.perf_counter()
    with ThreadPoolExecutor(NOTIFY_THREADS) as pool:
        list(pool.map(worker, [count // NOTIFY_THREADS] * NOTIFY_THREADS))
    return (count // NOTIFY_THREADS * NOTIFY_THREADS) / (time.perf_counter() - start)


def _measure(server: ServerProcess, repo: Path, questions: int, notifies: int) -> dict[str, float]:
    with httpx.Client(base_url=server.url, timeout=120) as client:
        first = _ask(client, repo, "warm-up?")  # creates the workspace (actor)
        latencies = [_ask(client, repo, f"question {i}?") for i in range(questions)]
    return {
        "first_s": first,
        "median_s": statistics.median(latencies),
        "p90_s": sorted(latencies)[int(0.9 * (len(latencies) - 1))],
        "notify_per_s": _notify_rate(server.url, repo, notifies),
    }


def _host(url: str, repo: Path) -> dict[str, object]:
    rows = httpx.get(f"{url}/actors", timeout=60).json()
    return next(r for r in rows if r.get("kind") == "ray_workspace_host" and r["root"] == str(repo))


def _forks(url: str, repo: Path, count: int) -> float:
    """Questions per second with PARALLEL in flight at once on one workspace."""
    with httpx.Client(base_url=url, timeout=120) as client:
        _ask(client, repo, "warm-up?")

    def one(n: int) -> None:
        with httpx.Client(base_url=url, timeout=120) as client:
            _ask(client, repo, f"SLOW parallel question {n}?")

    start = time.perf_counter()
    with ThreadPoolExecutor(PARALLEL) as pool:
        list(pool.map(one, range(count)))
    return count / (time.perf_counter() - start)


def _until(check: Callable[[], bool]) -> None:
    deadline = time.monotonic() + PATIENCE_S
    while not check():
        if time.monotonic() > deadline:
            raise RuntimeError("timed out")
        time.sleep(0.1)  # polling another process's state: no event to wait on


def _passivated(url: str, repo: Path) -> tuple[float, float]:
    """Ask on an idle gateway's actor, wait until /actors lists it passivated; seconds that
    took after the question, and until the next question (re-created by name) is answered."""
    with httpx.Client(base_url=url, timeout=120) as client:
        _ask(client, repo, "before the idle time?")
        asked = time.monotonic()
        _until(lambda: _host(url, repo).get("state") == "passivated")
        passivated = time.monotonic()
        _ask(client, repo, "after the idle time?")
    return passivated - asked, time.monotonic() - passivated


def _node_loss(cluster: RayCluster, url: str, checkouts: Path) -> float:
    """Place a workspace on a second raylet, kill that node, time the next answer."""
    resource = checkout_resource(str(checkouts))
    node = cluster.add_node({resource: 1000})
    nodes: list[dict[str, object]] = []

    def two_nodes() -> bool:
        nodes[:] = [
            r for r in httpx.get(f"{url}/actors", timeout=60).json() if r.get("kind") == "ray_node"
        ]
        return len(nodes) == 2

    _until(two_nodes)
    second = next(str(n["node_id"]) for n in nodes if not n["head"])
    shaped = [{"NodeID": n["node_id"], "Alive": True, "Resources": {resource: 1.0}} for n in nodes]
    name = next(
        f"lost-{i}"
        for i in itertools.count()
        if choose_node(os.path.realpath(checkouts / f"lost-{i}"), resource, shaped) == second
    )
    repo = make_repo(checkouts / name, FILES)
    with httpx.Client(base_url=url, timeout=300) as client:
        _ask(client, repo, "before the node loss?")
        killed_at = time.monotonic()
        node.kill()
        _ask(client, repo, "after the node loss?")
    return time.monotonic() - killed_at


def _restore(server: ServerProcess, repo: Path) -> tuple[float, float, float]:
    """Kill the workspace actor's process by its pid. Seconds from the kill until Ray runs the
    new process's constructor, the constructor's own restore (snapshot, preload), and until
    the next question is answered."""
    pid = int(str(_host(server.url, repo)["pid"]))
    killed_at = time.time()
    os.kill(pid, signal.SIGKILL)
    with httpx.Client(base_url=server.url, timeout=120) as client:
        _ask(client, repo, "after the kill?")
    answered = time.time() - killed_at
    host = _host(server.url, repo)
    started = float(str(host["started_at"])) - killed_at
    return started, float(str(host["restore_s"])), answered


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--questions", type=int, default=30)
    parser.add_argument("--notifies", type=int, default=400)
    parser.add_argument("--forks", type=int, default=16)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="lm-ray-bench-") as scratch, FakeProvider() as fake:
        fake.responder = lambda recorded: Text(
            "bench answer", delay_s=FORK_REPLY_S if "SLOW" in str(recorded.body) else 0.0
        )
        base = Path(scratch)
        checkouts = base / "repos"
        env = {"ANTHROPIC_API_KEY": "dummy", "ANTHROPIC_BASE_URL": fake.anthropic_base_url}
        with ServerProcess(base / "local", env) as local:
            repo = make_repo(checkouts / "local", FILES)
            on_local = _measure(local, repo, args.questions, args.notifies)
            forks_local = _forks(local.url, make_repo(checkouts / "local-forks", FILES), args.forks)
        with RayCluster(checkouts) as cluster:
            ray_env = env | {
                "LIVE_MEMORY_BACKEND": "ray",
                "LIVE_MEMORY_RAY_ADDRESS": cluster.address,
            }
            idle_env = ray_env | {"LIVE_MEMORY_PASSIVATE_AFTER_S": str(IDLE_S)}
            with (
                ServerProcess(base / "ray", ray_env) as gateway,
                ServerProcess(base / "ray", idle_env) as idle,
            ):
                repo = make_repo(checkouts / "ray", FILES)
                on_ray = _measure(gateway, repo, args.questions, args.notifies)
                forks_ray = _forks(
                    gateway.url, make_repo(checkouts / "ray-forks", FILES), args.forks
                )
                started, restore_s, answered = _restore(gateway, repo)
                went_idle, woke = _passivated(idle.url, make_repo(checkouts / "idle", FILES))
                node_lost = _node_loss(cluster, gateway.url, checkouts)
    print(f"questions: {args.questions} sequential after one warm-up; fake provider, instant")
    for name, figures in (("local", on_local), ("ray", on_ray)):
        print(
            f"  {name:5} first {figures['first_s'] * 1000:7.1f} ms   median "
            f"{figures['median_s'] * 1000:6.1f} ms   p90 {figures['p90_s'] * 1000:6.1f} ms   "
            f"/notify {figures['notify_per_s']:7.1f} req/s ({NOTIFY_THREADS} connections)"
        )
    overhead = (on_ray["median_s"] - on_local["median_s"]) * 1000
    print(f"  per-question overhead of ray: {overhead:+.1f} ms (median)")
    print(
        f"forks: {args.forks} questions, {PARALLEL} at once, reply {FORK_REPLY_S} s: local "
        f"{forks_local:.2f} q/s, ray {forks_ray:.2f} q/s (ideal {PARALLEL / FORK_REPLY_S:.1f})"
    )
    print(
        f"workspace actor killed by pid: new process constructed after {started:.2f} s, "
        f"snapshot restored in {restore_s:.2f} s, next answer {answered:.2f} s after the kill"
    )
    print(
        f"idle actor ({IDLE_S:.0f} s setting): listed passivated {went_idle:.2f} s after its "
        f"question; the next question, re-creating it from the snapshot, took {woke:.2f} s"
    )
    print(f"node lost (its raylet killed): next answer {node_lost:.2f} s after the kill")


if __name__ == "__main__":
    main()
