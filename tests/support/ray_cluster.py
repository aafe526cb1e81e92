"""A real single-node Ray cluster for the Ray backend's tests and bench (`ray start --head`).

Started once (a module fixture, the bench), in its own session and process group with a
private temp dir, one CPU and no dashboard; the node advertises the checkout resource of
`checkouts`, so workspace actors of repositories beneath it may run there. Stopped by its
process group id (the `ray start --block` parent, the GCS, the raylet and their workers).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Self

from live_memory.ray_backend import checkout_resource
from tests.support.server_process import free_port

__all__ = ["RayCluster"]

START_TIMEOUT_S = 180.0  # `ray start` takes 10-20 s on a quiet 2-core machine
STOP_GRACE_S = 10.0


class RayCluster:
    def __init__(self, checkouts: Path) -> None:
        self.checkouts = checkouts
        self.port = free_port()
        # Short: Ray's unix socket paths under it must stay within 107 bytes.
        self.temp = Path(tempfile.mkdtemp(prefix="lmray-", dir="/tmp"))
        self.log = self.temp / "ray-start.log"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> Self:
        ray = Path(sys.executable).with_name("ray")
        resources = json.dumps({checkout_resource(str(self.checkouts)): 1000})
        env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
        env["RAY_USAGE_STATS_ENABLED"] = "0"
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(
                [
                    str(ray),
                    "start",
                    "--head",
                    "--block",
                    f"--port={self.port}",
                    "--node-ip-address=127.0.0.1",
                    "--num-cpus=1",
                    "--include-dashboard=false",
                    "--disable-usage-stats",
                    f"--temp-dir={self.temp}",
                    f"--resources={resources}",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"ray start exited early:\n{self.log.read_text()}")
            if "Ray runtime started" in self.log.read_text(errors="replace"):
                return self
            time.sleep(0.1)  # polling a starting process: there is no event to wait on
        self.stop()
        raise RuntimeError(f"ray did not start:\n{self.log.read_text()}")

    def stop(self) -> None:
        if self.proc is not None:
            pgid = self.proc.pid  # the session leader: its group is everything it started
            try:
                os.killpg(pgid, signal.SIGTERM)
                self.proc.wait(timeout=STOP_GRACE_S)
            except ProcessLookupError:
                pass
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=STOP_GRACE_S)
            with contextlib.suppress(ProcessLookupError):  # what outlived the parent goes too
                os.killpg(pgid, signal.SIGKILL)
        shutil.rmtree(self.temp, ignore_errors=True)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
