"""Send one question straight to a workspace actor, as a gateway does; kill the actor's
process (`ray.kill`, restart allowed: Ray starts a new process, which restores its snapshot);
send the question with the same key twice more (a gateway's re-sends). Print what came
back, one JSON line per send, and the killed and the new pid.

    python tests/ray/resend_probe.py ADDRESS NAMESPACE ROOT KEY
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import ray

from live_memory.ray_backend import AskRequest, actor_name

RESTART_PATIENCE_S = 120.0  # a loaded machine: Ray starts a new worker process


def _send(host: Any, key: str, question: str) -> dict[str, Any]:
    outcome: Any = ray.get(host.call.remote(AskRequest(question, 1024, 90.0, key)))
    value, error = outcome.value, outcome.error
    if error is not None:
        return {"error": f"{type(error).__name__}: {error}"}
    return {"error": None, "answer": value.answer, "cost_usd": value.cost_usd}


def _pid(host: Any) -> int:
    return int(ray.get(host.inventory.remote())["pid"])


def main(address: str, namespace: str, root: str, key: str) -> None:
    ray.init(address=address, namespace=namespace, log_to_driver=False)
    host = ray.get_actor(actor_name(root), namespace=namespace)
    print(json.dumps(_send(host, key, "RESENT-QUESTION?")), flush=True)
    killed = _pid(host)
    ray.kill(host, no_restart=False)
    # ray.kill returns before the process is gone: under load the old process answered the
    # re-sends from its own memory (and the probe's last line showed the killed pid). The
    # re-sends go to the restarted actor: each inventory call waits for a live process.
    deadline = time.monotonic() + RESTART_PATIENCE_S
    while _pid(host) == killed and time.monotonic() < deadline:
        time.sleep(0.05)
    # Another text under the same key: were it asked, the model would see RESENT-AGAIN.
    print(json.dumps(_send(host, key, "RESENT-AGAIN?")), flush=True)
    print(json.dumps(_send(host, key, "RESENT-AGAIN?")), flush=True)
    print(json.dumps({"killed_pid": killed, "pid": _pid(host)}), flush=True)
    ray.shutdown()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4])
