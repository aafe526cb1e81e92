"""1,000 workspaces activated one after another (a /clear and a /notify each), then passivated.

Prints the server's RSS and thread count at start, at the peak, and after passivation, for two
waves of 1,000 new workspaces (the second shows whether passivated workspaces add up):
virtual workspace actors must cost threads only while they are active, and a passivated
workspace must leave next to nothing behind (target: under 10 MB for the 1,000, from the
server's start). The server runs as users run it: CPython's own allocator, no trimming, its
default settings but for the two below.

What a passivated workspace leaves is mostly the allocator pages of the most workspaces ever
active at once, so two things bound the peak, and the bench prints the most it saw active:
- the cap, LIVE_MEMORY_WORKSPACES_ACTIVE_MAX (`--active-max`, default: the server's, 64):
  past it the least recently used idle workspace is passivated early. `--active-max 1000` lets
  every workspace of a wave be active at once (the figure before the cap existed);
- the idle sweep, LIVE_MEMORY_PASSIVATE_AFTER_S (`--idle-s`, default 3 s): the first ones are
  passivated while later ones come. `--idle-s 60` passivates none while a wave comes in (the
  issue's "even when all were active first"), so the cap alone bounds the peak; the bench then
  waits the minute for the last ones to go idle.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import _repo_root  # noqa: F401 (puts the repository root on sys.path for tests.support)
import httpx

from tests.support.server_process import ServerProcess

WORKSPACES = 1000
IDLE_S = 3.0
SETTLE_S = 3.0
COUNT_EVERY = 50  # the active workspaces are counted (GET /actors) after this many activations


def _proc(pid: int) -> tuple[float, int]:
    rss_kb, threads = 0, 0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss_kb = int(line.split()[1])
        elif line.startswith("Threads:"):
            threads = int(line.split()[1])
    return rss_kb / 1024, threads


def _make_roots(tmp: Path, wave: int) -> list[Path]:
    roots = []
    for i in range(WORKSPACES):
        root = tmp / "ws" / f"wave{wave}-{i:04d}"
        (root / "src").mkdir(parents=True)
        (root / "src" / "app.py").write_text(f"VALUE = {i}\n", encoding="utf-8")
        roots.append(root)
    return roots


def _active(server: ServerProcess, client: httpx.Client) -> int:
    return sum(1 for a in client.get(f"{server.url}/actors").json() if a["kind"] == "workspace")


def _wave(
    server: ServerProcess, client: httpx.Client, roots: list[Path], idle_s: float
) -> tuple[float, ...]:
    """Activate every root with a /clear and one /notify, then wait until all are passivated.

    Returns (seconds to activate, most workspaces seen active, peak RSS MB, peak threads)."""
    assert server.proc is not None
    peak_rss, peak_threads = _proc(server.proc.pid)
    active = 0
    began = time.perf_counter()
    for number, root in enumerate(roots, 1):
        event = {"path": "src/app.py", "kind": "read", "content": "VALUE = 1\n"}
        # A notification alone creates no workspace (issue 12); a clear does, model-free.
        client.post(f"{server.url}/clear", json={"cwd": str(root)})
        client.post(f"{server.url}/notify", json={"cwd": str(root), "events": [event]})
        rss, threads = _proc(server.proc.pid)
        peak_threads, peak_rss = max(peak_threads, threads), max(peak_rss, rss)
        if number % COUNT_EVERY == 0:
            active = max(active, _active(server, client))
    activated = time.perf_counter() - began
    deadline = time.monotonic() + idle_s + 120
    while time.monotonic() < deadline:
        kinds = [a["kind"] for a in client.get(f"{server.url}/actors").json()]
        if "workspace" not in kinds:
            break
        time.sleep(0.5)  # polling another process's actor list: there is no event to wait on
    time.sleep(SETTLE_S)  # let the last passivations finish their writes
    return activated, active, peak_rss, peak_threads


def _run(idle_s: float, active_max: int | None) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="lm-scale-"))
    waves = [_make_roots(tmp, 1), _make_roots(tmp, 2)]
    env = {"LIVE_MEMORY_PASSIVATE_AFTER_S": str(idle_s)}
    if active_max is not None:
        env["LIVE_MEMORY_WORKSPACES_ACTIVE_MAX"] = str(active_max)
    with ServerProcess(tmp / "data", env) as server, httpx.Client(timeout=30) as client:
        assert server.proc is not None
        start_rss, start_threads = _proc(server.proc.pid)
        cap = "the server's default" if active_max is None else active_max
        print(f"idle sweep after {idle_s:g} s, workspaces active at most: {cap}")
        print(f"start: RSS {start_rss:.1f} MB, {start_threads} threads")
        for number, roots in enumerate(waves, 1):
            activated, active, peak_rss, peak_threads = _wave(server, client, roots, idle_s)
            end_rss, end_threads = _proc(server.proc.pid)
            passivated = number * WORKSPACES
            print(
                f"wave {number}: {WORKSPACES} new workspaces activated in {activated:.1f} s "
                f"(at most {active:.0f} seen active); peak RSS {peak_rss:.1f} MB, "
                f"{peak_threads:.0f} threads"
            )
            print(
                f"  after passivation ({passivated} passivated in all): RSS {end_rss:.1f} MB "
                f"({end_rss - start_rss:+.1f} MB, {1024 * (end_rss - start_rss) / passivated:.1f}"
                f" KB per passivated workspace), {end_threads} threads "
                f"({end_threads - start_threads:+d})"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--idle-s", type=float, default=IDLE_S, help="passivate after (s)")
    parser.add_argument(
        "--active-max", type=int, default=None, help="LIVE_MEMORY_WORKSPACES_ACTIVE_MAX"
    )
    args = parser.parse_args()
    _run(args.idle_s, args.active_max)


if __name__ == "__main__":
    main()
