"""Send one question straight to a workspace actor, as a gateway does, `times` times with one
key (a gateway's re-sends of one question); print what came back as JSON lines.

    python tests/ray/resend_probe.py ADDRESS NAMESPACE ROOT KEY TIMES
"""

from __future__ import annotations

import json
import sys
from typing import Any

import ray

from live_memory.ray_backend import AskRequest, actor_name


def main(address: str, namespace: str, root: str, key: str, times: int) -> None:
    ray.init(address=address, namespace=namespace, log_to_driver=False)
    host = ray.get_actor(actor_name(root), namespace=namespace)
    for _ in range(times):
        outcome: Any = ray.get(host.call.remote(AskRequest("RESENT-QUESTION?", 1024, 90.0, key)))
        value, error = outcome.value, outcome.error
        print(
            json.dumps(
                {"error": None, "answer": value.answer, "cost_usd": value.cost_usd}
                if error is None
                else {"error": f"{type(error).__name__}: {error}"}
            ),
            flush=True,
        )
    ray.shutdown()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
