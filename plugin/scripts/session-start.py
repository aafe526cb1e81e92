#!/usr/bin/env python3
"""Claude Code SessionStart hook: health banner, FileChanged watch paths, start backstop.

Prints one JSON object on stdout:
- `systemMessage`, the one-line health banner the user sees;
- `hookSpecificOutput.additionalContext`, a short note telling the agent the tool is there;
- `hookSpecificOutput.watchPaths`, the workspace's top-level entries: a plugin's FileChanged
  hook fires only for paths a SessionStart hook returns. Claude Code watches a directory
  recursively, so VCS, dependency and build directories are left out.

The server is meant to run supervised (systemd, launchd, docker: deploy/SUPERVISING.md). When
/health does not answer, this hook starts `live-memory serve` in the background as a backstop,
under an flock so that concurrent sessions never start two, and waits for it to come up.
Standard library only; any failure still exits 0 with a banner saying what is wrong.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from pathlib import Path

HEALTH_TIMEOUT_S = 0.5
STATS_TIMEOUT_S = 1.0
START_WAIT_S = 12.0
POLL_S = 0.1
MAX_WATCH_PATHS = 200
SKIP_DIRS = frozenset(
    {
        "node_modules",
        "__pycache__",
        "venv",
        "env",
        "dist",
        "build",
        "target",
        "out",
        "coverage",
        "vendor",
        "bower_components",
        "site-packages",
    }
)


def server_url(environ: Mapping[str, str]) -> str:
    host = environ.get("LIVE_MEMORY_HOST", "").strip() or "127.0.0.1"
    host = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    port = environ.get("LIVE_MEMORY_PORT", "").strip() or "7711"
    return f"http://{host}:{port}"


def get_json(url: str, token: str, timeout_s: float) -> object | None:
    """The JSON body of a 2xx GET, or None when the server is down or answers an error."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            return json.loads(response.read())
    except (OSError, ValueError):
        return None


def watch_paths(root: str) -> list[str]:
    """Absolute paths of the workspace's top-level entries worth watching."""
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return []
    paths = []
    for name in names:
        full = os.path.join(root, name)
        if name.startswith(".") or (name in SKIP_DIRS and os.path.isdir(full)):
            continue
        if name.endswith(".egg-info"):
            continue
        paths.append(full)
        if len(paths) >= MAX_WATCH_PATHS:
            break
    return paths


def data_root(environ: Mapping[str, str]) -> Path:
    base = environ.get("CLAUDE_PLUGIN_DATA", "").strip()
    return Path(base) if base else Path.home() / ".local" / "share" / "live-memory"


def start_server(environ: Mapping[str, str], health_url: str, token: str) -> str | None:
    """Start `live-memory serve` unless someone else does; None when up, else why not."""
    command = shutil.which("live-memory", path=environ.get("PATH"))
    if command is None:
        return (
            "`live-memory` is not installed or not on PATH "
            "(pipx install live-memory, then live-memory install-service)"
        )
    root = data_root(environ)
    root.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + START_WAIT_S
    fd = os.open(root / "serve-start.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        while True:  # another session may be starting it right now: wait for its lock
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    return "another session is starting the server; it is not up yet"
                time.sleep(POLL_S)
        if get_json(health_url, token, HEALTH_TIMEOUT_S) is not None:
            return None
        log_path = root / "serve.log"
        with open(log_path, "ab") as log:
            process = subprocess.Popen(
                [command, "serve"],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,  # outlive this hook and the Claude Code session
                env=dict(environ),
            )
        while time.monotonic() < deadline:
            if get_json(health_url, token, HEALTH_TIMEOUT_S) is not None:
                return None
            if process.poll() is not None:
                return f"`live-memory serve` exited {process.returncode}: {last_line(log_path)}"
            time.sleep(POLL_S)
        return f"started `live-memory serve` (pid {process.pid}) but it is not answering yet"
    finally:
        os.close(fd)


def last_line(path: Path) -> str:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return "no log"
    return lines[-1][:300] if lines else "no log"


def banner(health: object, stats: object, problem: str | None, url: str) -> str:
    if not isinstance(health, dict):
        return f"live-memory: ✗ not running at {url} ({problem}); ask_live_memory is unavailable"
    parts = [f"live-memory {health.get('version', '?')}"]
    if health.get("provider"):
        parts.append(f"{health.get('provider')}/{health.get('model')}")
    else:
        parts.append(f"⚠ {health.get('problem') or 'no model provider configured'}")
    if isinstance(stats, dict):
        context = stats.get("context") if isinstance(stats.get("context"), dict) else {}
        parts.append(f"this repo: {context.get('fill_pct', '?')}% of window")
        parts.append(f"{stats.get('questions_answered', 0)} answers")
        cost = stats.get("cost_usd")
        parts.append("subscription" if cost is None else f"${cost:.2f}")
    else:
        parts.append("this repo: new")
    return " · ".join(parts)


def run(stdin: bytes, environ: Mapping[str, str]) -> dict[str, object]:
    payload = json.loads(stdin or b"{}")
    payload = payload if isinstance(payload, dict) else {}
    cwd = str(payload.get("cwd") or environ.get("CLAUDE_PROJECT_DIR") or os.getcwd())
    url = server_url(environ)
    token = environ.get("LIVE_MEMORY_TOKEN", "").strip()
    problem = None
    health = get_json(f"{url}/health", token, HEALTH_TIMEOUT_S)
    if health is None:
        problem = start_server(environ, f"{url}/health", token)
        health = get_json(f"{url}/health", token, HEALTH_TIMEOUT_S) if problem is None else None
    stats = None
    if health is not None:
        query = urllib.parse.urlencode({"cwd": cwd})
        stats = get_json(f"{url}/stats?{query}", token, STATS_TIMEOUT_S)
    context = (
        f"live-memory is running: for broad questions about this codebase (where is X, how "
        f"does Y work, what calls Z) call the ask_live_memory tool with cwd={cwd!r} before "
        "reading many files yourself."
        if health is not None
        else "live-memory is not running this session; ask_live_memory is unavailable."
    )
    return {
        "systemMessage": banner(health, stats, problem, url),
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": context,
            "watchPaths": watch_paths(cwd),
        },
    }


def main() -> int:
    try:
        output = run(sys.stdin.buffer.read(), os.environ)
    except Exception as exc:  # a hook must never fail the session; show why instead
        output = {"systemMessage": f"live-memory: session-start hook failed: {exc}"}
    sys.stdout.write(json.dumps(output) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
