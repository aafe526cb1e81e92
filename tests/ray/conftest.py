"""One real Ray cluster and two `live-memory serve` gateways (LIVE_MEMORY_BACKEND=ray) on it,
shared by the whole Ray set: Ray's start-up is paid once per run, never per test. A third
gateway, `idle`, creates its workspace actors with a short passivation time.

Every test of this package is marked `ray` and kept on one xdist worker (the "ray" group of
tests/conftest.py's GROUPS), so `pytest -n 2 --dist loadgroup` starts only one cluster; it is
stopped as soon as the worker leaves this package (package scope), not at the end of the
session.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.fakes import FakeProvider, Text
from tests.support.ray_cluster import RayCluster
from tests.support.repo import make_repo
from tests.support.server_process import ServerProcess

pytest.importorskip("ray", reason="the Ray backend's extra is not installed")

IDLE_S = 3.0


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.ray)


@dataclass
class RaySet:
    cluster: RayCluster
    fake: FakeProvider
    a: ServerProcess
    b: ServerProcess
    idle: ServerProcess
    """Actors it creates passivate after IDLE_S without a call."""
    checkouts: Path
    data_dir: Path
    namespace: str

    def repo(self, name: str, files: dict[str, str] | None = None) -> Path:
        """A fresh git repository beneath the directory the cluster's node holds."""
        return make_repo(
            self.checkouts / name, files or {"src/app.py": "def answer():\n    return 42\n"}
        )


@pytest.fixture(scope="package")
def ray_set(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RaySet]:
    checkouts = tmp_path_factory.mktemp("ray-checkouts")
    data_dir = tmp_path_factory.mktemp("ray-data")  # the shared LIVE_MEMORY_DATA_DIR
    with FakeProvider() as fake, RayCluster(checkouts) as cluster:
        fake.responder = lambda recorded: Text("ray answer")
        namespace = f"test-{uuid.uuid4().hex[:8]}"
        env = {
            "ANTHROPIC_API_KEY": "dummy-key",
            "ANTHROPIC_BASE_URL": fake.anthropic_base_url,
            "LIVE_MEMORY_BACKEND": "ray",
            "LIVE_MEMORY_RAY_ADDRESS": cluster.address,
            "LIVE_MEMORY_RAY_NAMESPACE": namespace,
        }
        a, b = ServerProcess(data_dir, env), ServerProcess(data_dir, env)
        idle = ServerProcess(data_dir, env | {"LIVE_MEMORY_PASSIVATE_AFTER_S": str(IDLE_S)})
        with ThreadPoolExecutor(3) as pool:  # the gateways join the cluster at once
            started = [pool.submit(server.start) for server in (a, b, idle)]
        try:
            for future in started:
                future.result()
            yield RaySet(cluster, fake, a, b, idle, checkouts, data_dir, namespace)
        finally:
            with ThreadPoolExecutor(3) as pool:  # each drains its actors: at once, not in turn
                list(pool.map(_stop, (a, b, idle)))


def _stop(server: ServerProcess) -> None:
    if server.proc is not None:
        server.stop()
