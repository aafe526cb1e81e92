#!/usr/bin/env python3
"""Claude Code status line: live-memory's window fill and spend for the current workspace.

Plugins cannot set the status line themselves; add it to ~/.claude/settings.json:

    "statusLine": {"type": "command",
                   "command": "python3 /path/to/plugin/scripts/statusline.py"}

Reads Claude Code's status JSON on stdin (workspace.project_dir / workspace.current_dir / cwd),
asks GET /stats?cwd=… and prints one line such as `live-memory 42% · $0.31 · 12 answers`.
Standard library only; always exits 0.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.parse
from collections.abc import Mapping

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
identity = __import__("server-identity")  # the check that the server is ours (kebab-case name)

TIMEOUT_S = 0.4


def workspace_of(status: Mapping[str, object], environ: Mapping[str, str]) -> str:
    workspace = status.get("workspace")
    if isinstance(workspace, dict):
        for key in ("project_dir", "current_dir"):
            if isinstance(workspace.get(key), str) and workspace[key]:
                return str(workspace[key])
    cwd = status.get("cwd")
    return cwd if isinstance(cwd, str) and cwd else environ.get("CLAUDE_PROJECT_DIR", os.getcwd())


def render(stats: Mapping[str, object]) -> str:
    context = stats.get("context")
    fill = context.get("fill_pct") if isinstance(context, dict) else None
    known = isinstance(fill, (int, float))  # tuple form: runs on the user's python3 (3.9 too)
    parts = [f"live-memory {fill:.0f}%" if known else "live-memory ?%"]
    cost = stats.get("cost_usd")
    if cost is None:
        parts.append("subscription")
    elif isinstance(cost, (int, float)):
        parts.append(f"${cost:.2f}")
    answers = stats.get("questions_answered")
    if isinstance(answers, int):
        parts.append("1 answer" if answers == 1 else f"{answers} answers")
    return " · ".join(parts)


def line(stdin: bytes, environ: Mapping[str, str]) -> str:
    try:
        status = json.loads(stdin or b"{}")
    except ValueError:
        status = {}
    cwd = workspace_of(status if isinstance(status, dict) else {}, environ)
    path = f"/stats?{urllib.parse.urlencode({'cwd': cwd})}"
    try:
        code, raw = identity.request(environ, "GET", path, timeout_s=TIMEOUT_S)
        stats = json.loads(raw) if code < 400 else None
    except identity.NotOurServer:
        return "live-memory: not your server on its port"
    except (OSError, ValueError):
        return "live-memory: down"
    if stats is None:
        return "live-memory: new workspace" if code == 404 else f"live-memory: error {code}"
    return render(stats) if isinstance(stats, dict) else "live-memory: ?"


def main() -> int:
    try:
        text = line(sys.stdin.buffer.read(), os.environ)
    except Exception as exc:  # the status line must always print something
        text = f"live-memory: {type(exc).__name__}"
    sys.stdout.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
