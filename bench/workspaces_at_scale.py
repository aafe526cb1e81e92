"""1,000 workspaces activated (each by one /notify), then passivated when idle.

Prints the server's RSS and thread count at start, at the peak, and after passivation:
virtual workspace actors must cost threads only while they are active. Run twice: as `serve`
runs by default (system allocator, see `live_memory.cli.allocator`) and with CPython's
small-object allocator forced (`PYTHONMALLOC=pymalloc`), to show what the default buys.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import httpx

from live_memory.testing.server_process import ServerProcess

WORKSPACES = 1000
IDLE_S = 3.0


def _proc(pid: int) -> tuple[float, int]:
    rss_kb, threads = 0, 0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss_kb = int(line.split()[1])
        elif line.startswith("Threads:"):
            threads = int(line.split()[1])
    return rss_kb / 1024, threads


def _allocator(pid: int) -> str:
    for item in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"):
        if item.startswith(b"PYTHONMALLOC="):
            return item.decode()
    return "PYTHONMALLOC unset"


def _run(env_extra: dict[str, str]) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="lm-scale-"))
    roots = []
    for i in range(WORKSPACES):
        root = tmp / "ws" / f"w{i:04d}"
        (root / "src").mkdir(parents=True)
        (root / "src" / "app.py").write_text(f"VALUE = {i}\n", encoding="utf-8")
        roots.append(root)
    env = {"LIVE_MEMORY_PASSIVATE_AFTER_S": str(IDLE_S)} | env_extra
    with ServerProcess(tmp / "data", env) as server, httpx.Client(timeout=30) as client:
        assert server.proc is not None
        pid = server.proc.pid
        start_rss, start_threads = _proc(pid)
        allocator = _allocator(pid)
        peak_threads, peak_rss = start_threads, start_rss
        began = time.perf_counter()
        for root in roots:
            event = {"path": "src/app.py", "kind": "read", "content": "VALUE = 1\n"}
            client.post(f"{server.url}/notify", json={"cwd": str(root), "events": [event]})
            rss, threads = _proc(pid)
            peak_threads, peak_rss = max(peak_threads, threads), max(peak_rss, rss)
        activated = time.perf_counter() - began
        active = sum(
            1 for a in client.get(f"{server.url}/actors").json() if a["kind"] == "workspace"
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            kinds = [a["kind"] for a in client.get(f"{server.url}/actors").json()]
            if "workspace" not in kinds:
                break
            time.sleep(0.5)
        time.sleep(IDLE_S)  # the gateway hands freed memory back at its next idle sweep
        end_rss, end_threads = _proc(pid)
    print(f"server allocator: {allocator}")
    print(f"workspaces: {WORKSPACES} activated in {activated:.1f} s ({active} active at the peak)")
    print(f"start: RSS {start_rss:.1f} MB, {start_threads} threads")
    print(f"peak:  RSS {peak_rss:.1f} MB, {peak_threads} threads")
    print(
        f"after passivation: RSS {end_rss:.1f} MB ({end_rss - start_rss:+.1f} MB, "
        f"{1024 * (end_rss - start_rss) / WORKSPACES:.1f} KB per workspace), "
        f"{end_threads} threads ({end_threads - start_threads:+d})"
    )


def main() -> None:
    _run({})
    _run({"PYTHONMALLOC": "pymalloc"})


if __name__ == "__main__":
    main()
