#!/usr/bin/env python3
"""The SessionStart hook of every agent (`session-start.py [AGENT]`, claude-code when no AGENT
is given): opens the workspace, shows the health banner, returns watch paths, starts the server.

It first opens the session's workspace (POST /api/open, answered with the banner): the server
creates a workspace for a question or this call, never for a notification, so without it what
the hooks tee before a repository's first question would be dropped. For Claude Code it prints
one JSON object on stdout (other agents get the part of it they read, `OUTPUTS`):
- `systemMessage`, the one-line health banner the user sees, as the server renders it
  (the answer of POST /api/open, so its wording lives in one place:
  live_memory.knowledge.banner); when the server is down, this script prints the same down
  line itself, plus a line saying why;
- `hookSpecificOutput.additionalContext`, a short note telling the agent the tool is there and,
  when LIVE_MEMORY_SESSION_SUMMARY is true, a bounded summary of what the memory knows about
  this workspace (`summary: true` in the same request);
- `hookSpecificOutput.watchPaths`, the workspace's top-level entries: a plugin's FileChanged
  hook fires only for paths a SessionStart hook returns. Claude Code watches a directory
  recursively, so VCS, dependency and build directories are left out.

The server is meant to run supervised (`live-memory install-service`: a systemd user unit or a
launchd agent; deploy/SUPERVISING.md). When nothing answers the banner request, this hook first
starts that service if it is installed, else starts `live-memory serve --as-service` in the
background as a backstop (the service's own data dir, config file and provider settings, not
Claude Code's environment; it refuses when the session expects another port or token), under an
flock so that concurrent sessions never start two, and waits for it to come up.
Claude Code connects to MCP servers while this hook runs, so a server started here is not
connected in this session: the banner says the tool comes with the next session, and the agent
is not told to call it.
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
from collections.abc import Mapping
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
identity = __import__("server-identity")  # the check that the server is ours (kebab-case name)

HEALTH_TIMEOUT_S = 0.5
BANNER_TIMEOUT_S = 2.0
BANNER_PREFIX = "live-memory: "  # = live_memory.knowledge.banner.BANNER_PREFIX
SUMMARY_MAX_CHARS = 4000
SUMMARY_ENV = "LIVE_MEMORY_SESSION_SUMMARY"
TRUE_WORDS = frozenset({"true", "1", "yes", "on"})
NO_ANSWER = 0
NOT_OURS = -1
HEALTH_PATH = "/health"
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


def fetch_json(
    environ: Mapping[str, str], path: str, timeout_s: float, body: object = None
) -> tuple[int, object]:
    """(HTTP status, JSON body or None) of a GET (a POST of `body` when given) on a connection
    whose server proved it is ours; status NO_ANSWER when nothing answered, NOT_OURS (the body
    says why) when what answered is not this user's server: then neither the token nor the
    query was sent."""
    method, data = ("GET", None) if body is None else ("POST", json.dumps(body).encode())
    try:
        status, raw = identity.request(environ, method, path, body=data, timeout_s=timeout_s)
    except identity.NotOurServer as exc:
        return NOT_OURS, str(exc)
    except OSError:  # refused, reset, timed out, unresolvable
        return NO_ANSWER, None
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, None


def get_json(environ: Mapping[str, str], path: str, timeout_s: float) -> object | None:
    """The JSON body of a 2xx GET, or None when the server is down or answers an error."""
    status, body = fetch_json(environ, path, timeout_s)
    return body if 200 <= status < 300 else None


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


INSTALL_HINT = (
    "from a clone of the live-memory repository run `make install-user`, "
    "then `live-memory install-service`"
)
SYSTEMD_UNIT = "live-memory.service"
LAUNCHD_LABEL = "com.live-memory"
SERVICE_START_TIMEOUT_S = 10.0


class Started:
    """How the server came up in this hook: `how` is a sentence for the banner."""

    def __init__(self, how: str) -> None:
        self.how = how


def installed_service(environ: Mapping[str, str]) -> list[str] | None:
    """The command that starts the installed user service, or None when none is installed."""
    home = Path(environ.get("HOME") or Path.home())
    config_home = Path(environ.get("XDG_CONFIG_HOME") or home / ".config")
    path = environ.get("PATH")
    unit = config_home / "systemd" / "user" / SYSTEMD_UNIT
    if unit.is_file() and shutil.which("systemctl", path=path):
        return ["systemctl", "--user", "start", SYSTEMD_UNIT]
    plist = home / "Library" / "LaunchAgents" / f"{LAUNCHD_LABEL}.plist"
    if plist.is_file() and shutil.which("launchctl", path=path):
        return ["launchctl", "kickstart", f"gui/{os.getuid()}/{LAUNCHD_LABEL}"]
    return None


def has_spooled_events(spool: Path) -> bool:
    try:
        return (spool / "events.jsonl").stat().st_size > 0
    except OSError:
        return False


def start_server(environ: Mapping[str, str]) -> tuple[Started | None, str | None]:
    """Bring the server up unless someone else does: (how it was started, None) when it is up,
    (None, why not) otherwise. The installed service first; else the backstop."""
    service = installed_service(environ)
    command = shutil.which("live-memory", path=environ.get("PATH"))
    if service is None and command is None:
        return None, f"`live-memory` is not installed or not on PATH: {INSTALL_HINT}"
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
                    return None, "another session is starting the server; it is not up yet"
                time.sleep(POLL_S)
        if get_json(environ, HEALTH_PATH, HEALTH_TIMEOUT_S) is not None:
            return Started("another session started it just now"), None
        if service is not None:
            started, problem = start_service(service, environ=environ, deadline=deadline)
            if started is not None or command is None or not problem_is_launch(problem):
                return started, problem
            # The unit is there but its manager cannot start it (no user bus in a container,
            # WSL, an SSH session): the backstop still can.
            started, backstop_problem = start_backstop(
                command, root, environ=environ, deadline=deadline
            )
            if started is None:
                return None, f"{problem}; {backstop_problem}"
            started.how += f" ({problem})"
            return started, None
        assert command is not None
        return start_backstop(command, root, environ=environ, deadline=deadline)
    finally:
        os.close(fd)


SERVICE_FAILED = "the live-memory service is installed but "


def problem_is_launch(problem: str | None) -> bool:
    """The service manager refused or failed to start the unit (not: started, still silent)."""
    return bool(problem) and str(problem).startswith(SERVICE_FAILED)


def start_service(
    service: list[str],
    *,
    environ: Mapping[str, str],
    deadline: float,
) -> tuple[Started | None, str | None]:
    shown = " ".join(service)
    try:
        done = subprocess.run(
            service,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=SERVICE_START_TIMEOUT_S,
            env=dict(environ),
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"{SERVICE_FAILED}`{shown}` failed: {exc}"
    if done.returncode != 0:
        why = (done.stderr or done.stdout).strip().splitlines()
        detail = why[-1][:300] if why else f"exit {done.returncode}"
        return None, f"{SERVICE_FAILED}`{shown}` failed: {detail}"
    while time.monotonic() < deadline:
        if get_json(environ, HEALTH_PATH, HEALTH_TIMEOUT_S) is not None:
            return Started(f"the installed service was stopped; started it (`{shown}`)"), None
        time.sleep(POLL_S)
    return None, f"started the service (`{shown}`) but it is not answering yet"


def start_backstop(
    command: str,
    root: Path,
    *,
    environ: Mapping[str, str],
    deadline: float,
) -> tuple[Started | None, str | None]:
    log_path = root / "serve.log"
    with open(log_path, "ab") as log:
        process = subprocess.Popen(
            [command, "serve", "--as-service"],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,  # outlive this hook and the Claude Code session
            env=dict(environ),
        )
    while time.monotonic() < deadline:
        if get_json(environ, HEALTH_PATH, HEALTH_TIMEOUT_S) is not None:
            how = (
                f"started `live-memory serve --as-service` (pid {process.pid}, log {log_path}); "
                "to keep it running: `live-memory install-service`"
            )
            return Started(how), None
        if process.poll() is not None:
            return None, f"`live-memory serve` exited {process.returncode}: {last_line(log_path)}"
        time.sleep(POLL_S)
    return None, f"started `live-memory serve` (pid {process.pid}) but it is not answering yet"


def last_line(path: Path) -> str:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return "no log"
    return lines[-1][:300] if lines else "no log"


def down_line(url: str) -> str:
    """What live_memory.knowledge.banner.health_banner(None, None, server_url=url) says (a test
    keeps them equal): this script cannot import the package, it runs under any python3."""
    return f"{BANNER_PREFIX}server not running at {url} — start it with `live-memory serve`"


def wants_summary(environ: Mapping[str, str]) -> bool:
    return environ.get(SUMMARY_ENV, "").strip().lower() in TRUE_WORDS


def bounded(text: str, limit: int = SUMMARY_MAX_CHARS) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


NEXT_SESSION = (
    "the ask_live_memory tool connects from the next session at the latest "
    "(Claude Code connected its MCP servers before this hook started the server)"
)


def banner_line(
    status: int, body: object, problem: str | None, url: str, started: Started | None = None
) -> str:
    """The server's banner, the down line (and why), or what went wrong asking for it; when
    this hook started the server, a second line saying how and when the tool comes."""
    if status == NOT_OURS:
        return f"{BANNER_PREFIX}{body}"
    if status == NO_ANSWER and problem is not None:
        return f"{down_line(url)}\n{BANNER_PREFIX}{problem}"
    if status == NO_ANSWER:
        line = f"{BANNER_PREFIX}running at {url}, but POST {OPEN_PATH} did not answer in time"
    else:
        text = body.get("banner") if isinstance(body, dict) else None
        if 200 <= status < 300 and isinstance(text, str) and text.strip():
            line = text.strip()
        else:
            line = f"{BANNER_PREFIX}running at {url}, but POST {OPEN_PATH} answered HTTP {status}"
    if started is not None:
        line += f"\n{BANNER_PREFIX}{started.how}; {NEXT_SESSION}"
    return line


def agent_context(
    status: int, body: object, cwd: str, with_summary: bool, started: Started | None = None
) -> str:
    if status == NOT_OURS:
        return (
            "live-memory is unavailable this session: the process on its port is not the "
            "user's own server. Do not call ask_live_memory; explore the code with your own tools."
        )
    if status == NO_ANSWER and started is None:
        return "live-memory is not running this session; ask_live_memory is unavailable."
    if started is not None:
        context = (
            "live-memory was not running when this session started, so its ask_live_memory "
            "tool is most likely not connected in this session: do not try to call it; explore "
            "the code with your own tools. It will be available from the next session."
        )
    else:
        context = (
            f"live-memory is running: for broad questions about this codebase (where is X, how "
            f"does Y work, what calls Z) call the ask_live_memory tool with cwd={cwd!r} before "
            "reading many files yourself."
        )
    summary = body.get("summary") if with_summary and isinstance(body, dict) else None
    if isinstance(summary, str) and summary.strip():
        context += (
            "\n\nWhat live-memory already knows about this workspace (distilled from earlier "
            f"sessions and reads; may be out of date):\n{bounded(summary)}"
        )
    return context


CLAUDE_CODE = "claude-code"
OPEN_PATH = "/api/open"
# What each agent reads from a SessionStart hook's stdout: Claude Code, Gemini CLI and Codex
# the same envelope (only Claude Code's plugin hooks take watchPaths); Cursor's sessionStart
# `additional_context`. OpenCode's plugin ignores the output.
OUTPUTS = {CLAUDE_CODE: "claude", "gemini": "envelope", "codex": "envelope", "cursor": "cursor"}


def workspace_of(payload: Mapping[str, object], environ: Mapping[str, str]) -> str:
    roots = payload.get("workspace_roots")  # Cursor's
    root = roots[0] if isinstance(roots, list) and roots and isinstance(roots[0], str) else None
    given = payload.get("cwd") or root or environ.get("CLAUDE_PROJECT_DIR")
    return str(given or environ.get("GEMINI_PROJECT_DIR") or os.getcwd())


def run(stdin: bytes, environ: Mapping[str, str], agent: str = CLAUDE_CODE) -> dict[str, object]:
    payload = json.loads(stdin or b"{}")
    payload = payload if isinstance(payload, dict) else {}
    cwd = workspace_of(payload, environ)
    url = server_url(environ)
    with_summary = wants_summary(environ)
    request: dict[str, object] = {"cwd": cwd, "summary": with_summary}
    spool = data_root(environ) / "spool"  # = notify.py's Spool.default(environ)
    if has_spooled_events(spool):
        request["spool"] = str(spool)  # the server replays it, remembers it, and at every start
    problem = None
    started = None
    status, body = fetch_json(environ, OPEN_PATH, BANNER_TIMEOUT_S, request)
    if status == NO_ANSWER:
        started, problem = start_server(environ)
        if problem is None:
            status, body = fetch_json(environ, OPEN_PATH, BANNER_TIMEOUT_S, request)
    context = agent_context(status, body, cwd, with_summary, started)
    shape = OUTPUTS.get(agent, "envelope")
    if shape == "cursor":
        return {"additional_context": context}
    specific: dict[str, object] = {"hookEventName": "SessionStart", "additionalContext": context}
    if shape == "claude":
        specific["watchPaths"] = watch_paths(cwd)
    return {
        "systemMessage": banner_line(status, body, problem, url, started),
        "hookSpecificOutput": specific,
    }


def main() -> int:
    agent = sys.argv[1] if len(sys.argv) > 1 else CLAUDE_CODE
    identity.mark_fired(os.environ, agent)
    try:
        output = run(sys.stdin.buffer.read(), os.environ, agent)
    except Exception as exc:  # a hook must never fail the session; show why instead
        output = {"systemMessage": f"{BANNER_PREFIX}session-start hook failed: {exc}"}
    sys.stdout.write(json.dumps(output) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
