#!/usr/bin/env python3
"""Backs the /live-memory-* slash commands: prints the human-facing text itself.

    live-memory-command.py stats  [DIR]
    live-memory-command.py reset  [DIR]
    live-memory-command.py empty  [DIR]
    live-memory-command.py config [KEY=VALUE ...]

The command files run this through Claude Code's `!` execution, so the table or message comes
from here and the model only relays it. `config` delegates to the `live-memory` CLI (it owns
config.json validation); the others talk to the server directly. Standard library only;
exits 0 with a readable message whatever happens, since the text is what the user sees.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import urllib.parse
from collections.abc import Mapping, Sequence

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
identity = __import__("server-identity")  # the check that the server is ours (kebab-case name)

TIMEOUT_S = 10.0
CLI_TIMEOUT_S = 30.0


def base_url(environ: Mapping[str, str]) -> str:
    host = environ.get("LIVE_MEMORY_HOST", "").strip() or "127.0.0.1"
    host = {"0.0.0.0": "127.0.0.1", "::": "[::1]"}.get(host, host)
    port = environ.get("LIVE_MEMORY_PORT", "").strip() or "7711"
    return f"http://{host}:{port}"


class Refused(RuntimeError):
    """The server answered 4xx/5xx; `status` says which."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def call(environ: Mapping[str, str], method: str, path: str, body: object = None) -> str:
    """The response text of a 2xx answer; raises RuntimeError with a readable message (the
    request goes only to a server that proved it is this user's own)."""
    data = None if body is None else json.dumps(body).encode()
    headers = {"Accept": "text/plain, application/json"}
    try:
        status, raw = identity.request(
            environ, method, path, body=data, headers=headers, timeout_s=TIMEOUT_S
        )
    except identity.NotOurServer as exc:
        raise RuntimeError(f"live-memory: {exc}") from None
    except OSError:
        raise RuntimeError(
            f"live-memory server is not running at {base_url(environ)}; "
            "start it with `live-memory serve` (or `live-memory install-service`)"
        ) from None
    if status >= 400:
        raise Refused(status, error_text(raw, status))
    return raw.decode("utf-8", errors="replace")


def error_text(raw: bytes, status: int) -> str:
    try:
        message = json.loads(raw).get("error")
    except (ValueError, AttributeError):
        message = None
    return f"live-memory: {message or raw.decode(errors='replace').strip() or f'HTTP {status}'}"


def workspace(args: Sequence[str], environ: Mapping[str, str]) -> str:
    given = args[0] if args else environ.get("CLAUDE_PROJECT_DIR") or os.getcwd()
    return os.path.abspath(os.path.expanduser(given))


def stats(args: Sequence[str], environ: Mapping[str, str]) -> str:
    cwd = workspace(args, environ)
    query = urllib.parse.urlencode({"cwd": cwd, "format": "text"})
    try:
        return call(environ, "GET", f"/stats?{query}")
    except Refused as exc:
        if exc.status == 404:
            return f"live-memory has no memory of {cwd} yet: it starts with the first question."
        raise


def reset(args: Sequence[str], environ: Mapping[str, str]) -> str:
    cwd = workspace(args, environ)
    call(environ, "POST", "/reset", {"cwd": cwd})
    return f"live-memory: memory of {cwd} wiped; preload files re-read."


def empty(args: Sequence[str], environ: Mapping[str, str]) -> str:
    cwd = workspace(args, environ)
    call(environ, "POST", "/clear", {"cwd": cwd})
    return f"live-memory: memory of {cwd} emptied."


def config(args: Sequence[str], environ: Mapping[str, str]) -> str:
    cli = shutil.which("live-memory", path=environ.get("PATH"))
    if cli is None:
        health = json.loads(call(environ, "GET", "/health"))
        return (
            f"provider {health.get('provider')}, model {health.get('model')}. To see or change "
            "settings, put the `live-memory` command on PATH: from a clone of the live-memory "
            "repository run `make install-user`."
        )
    command = [cli, "config", "set", *args] if args else [cli, "config", "get"]
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
        env=dict(environ),
        check=False,
    )
    return (done.stdout + done.stderr).strip() or f"live-memory config exited {done.returncode}"


ACTIONS = {"stats": stats, "reset": reset, "empty": empty, "config": config}


def main(argv: Sequence[str]) -> int:
    if not argv or argv[0] not in ACTIONS:
        sys.stdout.write(f"usage: live-memory-command.py {{{','.join(ACTIONS)}}} [ARGS]\n")
        return 0
    try:
        text = ACTIONS[argv[0]](list(argv[1:]), os.environ)
    except (RuntimeError, OSError, ValueError, subprocess.SubprocessError) as exc:
        text = str(exc)
    sys.stdout.write(text.rstrip("\n") + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
