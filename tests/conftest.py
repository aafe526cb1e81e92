"""Suite-wide collection order: long modules first, so `pytest -n 3` ends on short tests.

xdist's `--dist loadgroup` hands tests out one at a time in collection order (a group, such as
tests/ray, as one unit, first). In plain path order the two hypothesis state machines
(tests/workspace, collected last) were the final units and ran alone at the tail while the
other worker idled. Modules that start servers (`e2e`, `slow`, or a package-wide server
fixture such as tests/gateway's) or run hypothesis move to the front, whole and in their own
order; every other module follows in path order.

Groups for `--dist loadgroup` are decided here by path (`pytest_xdist_make_scheduler`): with
pytest 9.2 a node id is no longer the `_nodeid` string that pytest-xdist 3.8 appends the
`xdist_group` name to, so the mark alone groups nothing, and tests/ray (one Ray cluster per
worker that runs any of it) was spread over both workers.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any

import pytest

_LONG_MARKERS = frozenset({"e2e", "slow", "hypothesis"})
_WIDE_SCOPES = frozenset({"package", "session"})


def _module(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


def _is_long(item: pytest.Item) -> bool:
    if any(mark.name in _LONG_MARKERS for mark in item.iter_markers()):
        return True
    # A server shared by a whole package (its modules are kept together, so it starts once).
    info = getattr(item, "_fixtureinfo", None)
    definitions = getattr(info, "name2fixturedefs", {})
    return any(
        defs[-1].scope in _WIDE_SCOPES and defs[-1].baseid.startswith("tests/")
        for defs in definitions.values()
    )


_RUNTIME_DIR_KEY = pytest.StashKey[str]()


def pytest_configure(config: pytest.Config) -> None:
    # Servers publish their identity under XDG_RUNTIME_DIR and clients look there
    # (live_memory/server_identity.py): one private directory per test process, passed on to
    # every server and client the tests start, never the developer's own.
    runtime = tempfile.mkdtemp(prefix="live-memory-runtime-")  # 0700
    config.stash[_RUNTIME_DIR_KEY] = runtime
    os.environ["XDG_RUNTIME_DIR"] = runtime


def pytest_unconfigure(config: pytest.Config) -> None:
    runtime = config.stash.get(_RUNTIME_DIR_KEY, None)
    if runtime is not None:
        shutil.rmtree(runtime, ignore_errors=True)


@pytest.hookimpl(trylast=True)  # after the plugins that add markers (hypothesis's)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    long_modules = {_module(item) for item in items if _is_long(item)}
    # A stable sort: each module stays contiguous (its module-scoped servers start once).
    items.sort(key=lambda item: _module(item) not in long_modules)


GROUPS = {
    "tests/ray/": "ray",  # one Ray cluster and three gateways (tests/ray/conftest.py)
    # Modules whose module-scoped fixture starts `live-memory serve` or a browser: one unit
    # starts it once; as single tests they started it on each worker that got one of them.
    "tests/cli/test_server_config.py": "server-config",
    "tests/e2e/test_dashboard_browser.py": "dashboard-browser",
    "tests/e2e/test_hardening_end_to_end.py": "hardening",
}
"""Path prefix -> the xdist group all its tests run in (on one worker). Every other test is
a unit of its own (`--dist loadgroup`), handed out in collection order."""


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist, absent without it
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    if config.getvalue("dist") != "loadgroup":
        return None
    missing = [path for path in GROUPS if not (config.rootpath / path).exists()]
    if missing:  # a renamed module would silently lose its group
        raise pytest.UsageError(f"tests/conftest.py GROUPS names missing paths: {missing}")
    from xdist.scheduler import LoadGroupScheduling  # noqa: PLC0415 (only under xdist)

    class PathGroups(LoadGroupScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            for prefix, group in GROUPS.items():
                if nodeid.startswith(prefix):
                    return group
            return str(super()._split_scope(nodeid))

    return PathGroups(config, log)
