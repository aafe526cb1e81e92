"""The notify hook end to end (python start-up, the identity check, the POST) against a real
`live-memory serve`: median and p95 wall time per call, as Claude Code waits for it.

    .venv/bin/python bench/hook_latency.py [--runs 50] [HOOK.py ...]

Several hook scripts (say the one of an older commit, copied aside) are run interleaved, call
by call, so a busy machine disturbs them alike; the default is the plugin's own.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _repo_root  # puts the repository root on sys.path for tests.support

from tests.support.server_process import ServerProcess

ROOT = Path(_repo_root.ROOT)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("hooks", nargs="*", default=[str(ROOT / "plugin/scripts/notify.py")])
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="hook-latency-"))
    project = work / "project"
    project.mkdir()
    (project / "a.py").write_text("def answer():\n    return 42\n" * 40)
    payload = json.dumps(
        {
            "hook_event_name": "PostToolUse",
            "tool_name": "Read",
            "cwd": str(project),
            "tool_input": {"file_path": str(project / "a.py")},
        }
    ).encode()
    times: dict[str, list[float]] = {hook: [] for hook in args.hooks}
    with ServerProcess(work / "data", {}) as server:
        env = {**server.env, "LIVE_MEMORY_PORT": str(server.port)}
        env["CLAUDE_PLUGIN_DATA"] = str(work / "plugin-data")
        for _ in range(args.runs + 3):  # the first three warm the page cache and the workspace
            for hook in args.hooks:
                started = time.perf_counter()
                done = subprocess.run(
                    [sys.executable, "-I", "-S", hook],
                    input=payload,
                    env=env,
                    capture_output=True,
                    check=False,
                )
                times[hook].append(time.perf_counter() - started)
                if done.returncode or done.stderr:
                    raise SystemExit(f"{hook} failed: {done.stderr.decode()}")
    spooled = work / "plugin-data" / "spool" / "events.jsonl"
    if spooled.exists():
        raise SystemExit(f"not every call was delivered: {spooled} holds some")
    for hook, values in times.items():
        kept = sorted(values[3:])
        p95 = kept[min(len(kept) - 1, int(0.95 * len(kept)))]
        print(
            f"{hook}: median {statistics.median(kept) * 1000:.1f} ms, "
            f"p95 {p95 * 1000:.1f} ms over {len(kept)} calls"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
