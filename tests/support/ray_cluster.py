"""A real local Ray cluster for the Ray backend's tests and bench (`ray start --head`).

Started once (a module fixture, the bench), in its own session and process group with a
private temp dir, one CPU and no dashboard; the node advertises the checkout resource of
`checkouts`, so workspace actors of repositories beneath it may run there. Stopped by its
process group id (the `ray start --block` parent, the GCS, the raylet and their workers).

`add_node` starts a second raylet on this machine (`ray start --address`, its own ports, temp
dir and process group), so a test can place a workspace actor on it and kill that node for
real. The head declares a node dead after HEALTH_CHECK_* (about 3 s here instead of Ray's
default 15 s and more), so a node loss is noticed within a test's patience.
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
STOP_TERM_S = 2.0  # a throwaway test cluster: SIGTERM, then SIGKILL what is left
HEALTH_CHECK = {  # the GCS's checks of each raylet: dead after 3 missed 1 s checks
    "RAY_health_check_initial_delay_ms": "1000",
    "RAY_health_check_period_ms": "1000",
    "RAY_health_check_timeout_ms": "1000",
    "RAY_health_check_failure_threshold": "3",
}


def _ray_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env["RAY_USAGE_STATS_ENABLED"] = "0"
    return env | HEALTH_CHECK


class _RayProcess:
    """One `ray start --block` in its own session: its group is everything it started."""

    def __init__(self, args: list[str], temp: Path) -> None:
        self.temp = temp
        self.log = temp / "ray-start.log"
        ray = Path(sys.executable).with_name("ray")
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(
                [str(ray), "start", "--block", f"--temp-dir={temp}", *args],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=_ray_env(),
                start_new_session=True,
            )

    def wait_started(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"ray start exited early:\n{self.log.read_text()}")
            if "Ray runtime started" in self.log.read_text(errors="replace"):
                return
            time.sleep(0.1)  # polling a starting process: there is no event to wait on
        self.stop()
        raise RuntimeError(f"ray did not start:\n{self.log.read_text()}")

    def kill(self) -> None:
        """SIGKILL the whole node at once (raylet, its workers): a machine lost."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=STOP_GRACE_S)

    def stop(self) -> None:
        pgid = self.proc.pid  # the session leader: its group is everything it started
        try:
            os.killpg(pgid, signal.SIGTERM)
            self.proc.wait(timeout=STOP_TERM_S)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=STOP_GRACE_S)
        with contextlib.suppress(ProcessLookupError):  # what outlived the parent goes too
            os.killpg(pgid, signal.SIGKILL)
        shutil.rmtree(self.temp, ignore_errors=True)


class RayCluster:
    def __init__(self, checkouts: Path) -> None:
        self.checkouts = checkouts
        self.port = free_port()
        self.head: _RayProcess | None = None
        self.nodes: list[_RayProcess] = []

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> Self:
        resources = json.dumps({checkout_resource(str(self.checkouts)): 1000})
        self.head = _RayProcess(
            [
                "--head",
                f"--port={self.port}",
                "--node-ip-address=127.0.0.1",
                "--num-cpus=1",
                "--include-dashboard=false",
                "--disable-usage-stats",
                f"--resources={resources}",
            ],
            _short_temp(),
        )
        self.head.wait_started()
        return self

    def add_node(self, resources: dict[str, float]) -> _RayProcess:
        """A second raylet on this machine joined to the head, advertising `resources`."""
        ports = [f"--{name}={free_port()}" for name in _NODE_PORTS]
        node = _RayProcess(
            [
                f"--address={self.address}",
                "--node-ip-address=127.0.0.1",
                "--num-cpus=1",
                "--disable-usage-stats",
                f"--resources={json.dumps(resources)}",
                *ports,
            ],
            _short_temp(),
        )
        self.nodes.append(node)
        node.wait_started()
        return node

    def stop(self) -> None:
        for process in [*self.nodes, *([self.head] if self.head else [])]:
            process.stop()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


_NODE_PORTS = (
    "node-manager-port",
    "object-manager-port",
    "dashboard-agent-listen-port",
    "dashboard-agent-grpc-port",
    "runtime-env-agent-port",
    "metrics-export-port",
)
"""A second node on the same machine needs its own of each (the defaults are fixed ports)."""


def _short_temp() -> Path:
    # Short: Ray's unix socket paths under it must stay within 107 bytes.
    return Path(tempfile.mkdtemp(prefix="lmray-", dir="/tmp"))
