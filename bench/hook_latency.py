"""The notify hook end to end (python start-up, the identity check, the POST) against a real
`live-memory serve`: median and p95 wall time per call, as Claude Code waits for it; then the
POST alone (`Endpoint.post` in this process, no start-up), where the check's cost shows.

    .venv/bin/python bench/hook_latency.py [--runs 50] [HOOK.py ...]

Several hook scripts (say the one of an older commit, copied aside) are run interleaved, call
by call, so a busy machine disturbs them alike; the default is the plugin's own.

    .venv/bin/python bench/hook_latency.py --agents [--runs 50]

runs the shared hook client as each connected agent runs it (`notify.py AGENT`, fed a recorded
read payload of that agent: Gemini CLI's AfterTool, Cursor's beforeReadFile, OpenCode's
plugin event, Codex's PostToolUse on `cat`), interleaved, and Claude Code's HTTP hook option
(`connect claude-code --http-hooks`): Claude Code posts the payload itself, measured here as
one POST on a fresh connection, with no process and no identity check.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import resource
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
    parser.add_argument("--agents", action="store_true", help="each agent's hook, and HTTP")
    parser.add_argument("hooks", nargs="*", default=[str(ROOT / "plugin/scripts/notify.py")])
    args = parser.parse_args()
    if args.agents:
        return _agents(args.runs)
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
    cpu: dict[str, list[float]] = {hook: [] for hook in args.hooks}
    with ServerProcess(work / "data", {}) as server:
        env = {**server.env, "LIVE_MEMORY_PORT": str(server.port)}
        env["CLAUDE_PLUGIN_DATA"] = str(work / "plugin-data")
        for _ in range(args.runs + 3):  # the first three warm the page cache and the workspace
            for hook in args.hooks:
                started, cpu_before = time.perf_counter(), _children_cpu_s()
                done = subprocess.run(
                    [sys.executable, "-I", "-S", hook],
                    input=payload,
                    env=env,
                    capture_output=True,
                    check=False,
                )
                times[hook].append(time.perf_counter() - started)
                cpu[hook].append(_children_cpu_s() - cpu_before)
                if done.returncode or done.stderr:
                    raise SystemExit(f"{hook} failed: {done.stderr.decode()}")
        posts = _posts_in_process(args.hooks, env, payload, args.runs * 4)
    spooled = work / "plugin-data" / "spool" / "events.jsonl"
    if spooled.exists():
        raise SystemExit(f"not every call was delivered: {spooled} holds some")
    for hook, values in times.items():
        kept = sorted(values[3:])
        p95 = kept[min(len(kept) - 1, int(0.95 * len(kept)))]
        print(
            f"{hook}: median {statistics.median(kept) * 1000:.1f} ms, "
            f"p95 {p95 * 1000:.1f} ms over {len(kept)} calls (CPU median "
            f"{statistics.median(cpu[hook][3:]) * 1000:.1f} ms); the POST alone: "
            f"median {statistics.median(posts[hook]) * 1000:.2f} ms"
        )
    return 0


def _children_cpu_s() -> float:
    """The hook's own CPU time (user + system): what a loaded machine disturbs least."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _posts_in_process(
    hooks: list[str], env: dict[str, str], payload: bytes, runs: int
) -> dict[str, list[float]]:
    endpoints = {}
    for index, hook in enumerate(hooks):
        spec = importlib.util.spec_from_file_location(f"hook_{index}", hook)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        endpoints[hook] = (module, module.Endpoint(env))
    times: dict[str, list[float]] = {hook: [] for hook in hooks}
    for _ in range(runs):
        for hook, (module, endpoint) in endpoints.items():
            body = json.dumps(module.build_body(json.loads(payload))).encode()
            started = time.perf_counter()
            if endpoint.post("/notify", body) != module.DELIVERED:
                raise SystemExit(f"{hook}: not delivered")
            times[hook].append(time.perf_counter() - started)
    return times


def _agent_payloads(project: Path) -> dict[str, dict[str, object]]:
    """One recorded read per agent, in its own payload shape (tests/plugin/test_agent_hooks)."""
    path = str(project / "a.py")
    return {
        "claude-code": {
            "hook_event_name": "PostToolUse",
            "tool_name": "Read",
            "cwd": str(project),
            "tool_input": {"file_path": path},
        },
        "gemini": {
            "hook_event_name": "AfterTool",
            "tool_name": "read_file",
            "cwd": str(project),
            "tool_input": {"file_path": path},
        },
        "cursor": {
            "hook_event_name": "beforeReadFile",
            "file_path": path,
            "content": (project / "a.py").read_text(),
            "workspace_roots": [str(project)],
        },
        "opencode": {
            "hook_event_name": "tool.execute.before",
            "tool_name": "read",
            "cwd": str(project),
            "tool_input": {"filePath": path},
        },
        "codex": {
            "hook_event_name": "PostToolUse",
            "tool_name": "Bash",
            "cwd": str(project),
            "tool_input": {"command": "sed -n 1,200p a.py"},
        },
    }


def _agents(runs: int) -> int:
    """Each agent's hook (a process per call) and Claude Code's HTTP hook (no process)."""
    import http.client  # noqa: PLC0415 (only this mode posts in-process)

    work = Path(tempfile.mkdtemp(prefix="hook-latency-agents-"))
    project = work / "project"
    project.mkdir()
    (project / "a.py").write_text("def answer():\n    return 42\n" * 40)
    payloads = _agent_payloads(project)
    script = str(ROOT / "plugin/scripts/notify.py")
    times: dict[str, list[float]] = {name: [] for name in [*payloads, "claude-code --http-hooks"]}
    with ServerProcess(work / "data", {}) as server:
        env = {**server.env, "LIVE_MEMORY_PORT": str(server.port)}
        env["CLAUDE_PLUGIN_DATA"] = str(work / "plugin-data")  # its spool and stamps
        server.request("POST", "/api/open", json={"cwd": str(project)}).raise_for_status()
        raw = json.dumps(payloads["claude-code"]).encode()
        for _ in range(runs + 3):  # the first three warm the page cache and the workspace
            for agent, payload in payloads.items():
                started = time.perf_counter()
                done = subprocess.run(
                    [sys.executable, "-I", "-S", script, agent],
                    input=json.dumps(payload).encode(),
                    env=env,
                    capture_output=True,
                    check=False,
                )
                times[agent].append(time.perf_counter() - started)
                if done.returncode or done.stderr:
                    raise SystemExit(f"{agent} failed: {done.stderr.decode()}")
            started = time.perf_counter()
            connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
            connection.request("POST", "/notify", raw, {"Content-Type": "application/json"})
            status = connection.getresponse().status
            connection.close()
            times["claude-code --http-hooks"].append(time.perf_counter() - started)
            if status != 200:
                raise SystemExit(f"the HTTP hook's POST answered {status}")
    if (work / "plugin-data" / "spool" / "events.jsonl").exists():
        raise SystemExit("not every call was delivered: the spool holds some")
    for name, values in times.items():
        kept = sorted(values[3:])
        p95 = kept[min(len(kept) - 1, int(0.95 * len(kept)))]
        print(
            f"{name:26} median {statistics.median(kept) * 1000:6.1f} ms, "
            f"p95 {p95 * 1000:6.1f} ms over {len(kept)} calls"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
