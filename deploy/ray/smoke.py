#!/usr/bin/env python3
"""Smoke-test two gateways on one Ray cluster: one memory behind both.

    python deploy/ray/smoke.py http://127.0.0.1:7711 http://127.0.0.1:7712 /path/to/repo

1. a question through gateway A (creates the workspace actor on the cluster);
2. a notification through gateway B;
3. a question through gateway B, then /stats through A: both gateways see 2 questions and
   the notified file;
4. /actors through B lists the workspace actor with its node and pid.
Exits 0 when all of that holds; prints each step. Only the standard library is used.
"""

from __future__ import annotations

import json
import sys
import urllib.parse
import urllib.request
from typing import Any

TIMEOUT_S = 180.0


def _call(method: str, url: str, body: object | None = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    request.add_header("content-type", "application/json")
    with urllib.request.urlopen(request, timeout=TIMEOUT_S) as reply:  # noqa: S310 (our server)
        return json.loads(reply.read())


def main(a: str, b: str, repo: str) -> int:
    first = _call("POST", f"{a}/api/ask", {"question": "What is this repository?", "cwd": repo})
    print("A answered:", first["answer"][:80].replace("\n", " "))
    event = {"path": "README.md", "kind": "read", "content": "# smoke\n"}
    notified = _call("POST", f"{b}/notify", {"cwd": repo, "events": [event]})
    print("B notified:", notified)
    second = _call("POST", f"{b}/api/ask", {"question": "And now?", "cwd": repo})
    print("B answered:", second["answer"][:80].replace("\n", " "))
    query = urllib.parse.urlencode({"cwd": repo})
    stats = _call("GET", f"{a}/stats?{query}")
    print("A stats: questions", stats["questions_answered"], "files", stats["file_contexts"])
    hosts = [
        row
        for row in _call("GET", f"{b}/actors")
        if row.get("kind") == "ray_workspace_host" and row.get("root") == stats["workspace"]
    ]
    print("B actors:", [(h["root"], h["node_id"][:12], h["pid"]) for h in hosts])
    ok = notified["accepted"] == 1 and stats["questions_answered"] >= 2 and len(hosts) == 1
    print("smoke:", "ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(*sys.argv[1:]))
