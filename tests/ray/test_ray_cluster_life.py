"""The Ray backend's life on a cluster: forks as Ray tasks, idle actors passivated and
re-created, a question answered once per key over an actor's death, and a node lost for
real (a second raylet on this machine, killed). Real cluster, real gateways, the fake model
over HTTP; waits are on the fake's events and on polls of /actors, never on sleeps."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from live_memory.ray_backend import checkout_resource, choose_node
from tests.ray.conftest import IDLE_S, RaySet
from tests.ray.test_ray_backend import (
    _ask,
    _host_row,
    _notify,
    _prompt_of_last_call,
    _snapshot_files,
    _stats,
)
from tests.support import loopback
from tests.support.repo import make_repo

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(600)]

PROBE = Path(__file__).with_name("resend_probe.py")
PATIENCE_S = 180.0  # an actor restarting on a loaded machine: Ray's worker start and restore


def _until(what: str, check: Callable[[], Any]) -> Any:
    """Poll `check` (an /actors read, a process) until it returns something truthy."""
    deadline = time.monotonic() + PATIENCE_S
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.2)  # polling another process's state: there is no event to wait on
    raise AssertionError(f"timed out waiting for {what}")


def _rows(url: str, kind: str) -> list[dict[str, Any]]:
    return [r for r in loopback.get(f"{url}/actors", timeout=60).json() if r.get("kind") == kind]


def _pid(row: dict[str, object]) -> int:
    return int(str(row["pid"]))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_parallel_questions_fork_as_separate_ray_tasks_and_both_commit(ray_set: RaySet) -> None:
    repo = ray_set.repo("forked")
    assert _ask(ray_set.a.url, repo, "warm-up?").status_code == 200
    seen = len(ray_set.fake.requests)
    gate = ray_set.fake.hold()  # both forks' model calls stay in flight until both arrived

    with ThreadPoolExecutor(2) as pool:
        asked = [pool.submit(_ask, ray_set.a.url, repo, f"PARALLEL-{n}?") for n in (1, 2)]
        ray_set.fake.wait_for_requests(seen + 2, timeout_s=PATIENCE_S)
        gate.set()
        replies = [future.result() for future in asked]

    assert [r.status_code for r in replies] == [200, 200], [r.text for r in replies]
    host = _host_row(ray_set.a.url, repo)
    runs: list[dict[str, Any]] = host["forks"]  # type: ignore[assignment]
    forks = [f for f in runs if f["committed"]][-2:]
    assert len(forks) == 2 and len({f["task_id"] for f in forks}) == 2, runs
    # Two tasks at once ran in two Ray worker processes, neither of them the host's.
    assert len({f["pid"] for f in forks}) == 2 and host["pid"] not in {f["pid"] for f in forks}
    assert {f["node_id"] for f in forks} == {host["node_id"]}
    stats = _stats(ray_set.a.url, repo)
    assert stats["questions_answered"] == 3
    # The optimistic version rule: the first commit was linear, the second a race on it.
    commits = stats["commits"]
    assert commits["linear"] == 2 and commits["race_adopted"] + commits["race_dropped"] == 1
    assert stats["version"] == 2 + commits["race_adopted"]


def test_an_idle_workspace_actor_is_passivated_and_recreated_from_its_snapshot(
    ray_set: RaySet,
) -> None:
    repo = ray_set.repo("idle")
    assert _ask(ray_set.idle.url, repo, "QUESTION-BEFORE-IDLE?").status_code == 200
    pid = _pid(_host_row(ray_set.idle.url, repo))

    row = _until(
        "the idle actor to be passivated",
        lambda: (
            _host_row(ray_set.idle.url, repo)["state"] == "passivated"
            and _host_row(ray_set.idle.url, repo)
        ),
    )
    _until("the idle actor's process to end", lambda: not _alive(pid))
    assert row["snapshot_at"] and "pid" not in row
    again = _ask(ray_set.idle.url, repo, "after the idle time?")

    assert again.status_code == 200, again.text
    assert "QUESTION-BEFORE-IDLE?" in _prompt_of_last_call(ray_set)  # restored history
    after = _host_row(ray_set.idle.url, repo)
    assert after["state"] == "active" and after["pid"] != pid
    assert after["restarted"] is False  # a new actor by name, not a Ray restart
    assert _stats(ray_set.idle.url, repo)["questions_answered"] == 2
    assert IDLE_S < 900  # the other gateways' actors keep the default idle time


def _answered_once(ray_set: RaySet, name: str) -> tuple[Path, dict[str, Any], int]:
    """A workspace with one question answered: its repo, /stats, and the model calls so far."""
    repo = ray_set.repo(name)
    assert _ask(ray_set.a.url, repo, "warm-up?").status_code == 200
    return repo, _stats(ray_set.a.url, repo), len(ray_set.fake.requests)


def test_a_question_in_flight_when_its_actor_dies_is_answered_and_counted_once(
    ray_set: RaySet,
) -> None:
    repo, before, seen = _answered_once(ray_set, "in-flight")
    pid = _pid(_host_row(ray_set.a.url, repo))
    gate = ray_set.fake.hold()

    with ThreadPoolExecutor(1) as pool:
        asked = pool.submit(_ask, ray_set.a.url, repo, "IN-FLIGHT-QUESTION?")
        ray_set.fake.wait_for_requests(seen + 1, timeout_s=PATIENCE_S)  # its model call is out
        os.kill(pid, signal.SIGKILL)
        # The call is sent again (Ray's retry, the gateway's re-send: one key) to the
        # restarted actor, whose fork asks the model again from the restored memory.
        ray_set.fake.wait_for_requests(seen + 2, timeout_s=PATIENCE_S)
        gate.set()
        reply = asked.result()

    assert reply.status_code == 200, reply.text
    stats = _stats(ray_set.a.url, repo)
    assert stats["questions_answered"] == before["questions_answered"] + 1
    spent = reply.json()["cost_usd"]
    assert spent and stats["cost_usd"] == pytest.approx(before["cost_usd"] + spent)
    budget, was = stats["budget"], before["budget"]
    assert budget["workspace_spent_today_usd"] == pytest.approx(
        was["workspace_spent_today_usd"] + spent
    )


def _probe(ray_set: RaySet, repo: Path, key: str) -> list[dict[str, Any]]:
    where = [ray_set.cluster.address, ray_set.namespace, str(repo)]
    done = subprocess.run(
        [sys.executable, str(PROBE), *where, key],
        capture_output=True,
        text=True,
        timeout=PATIENCE_S,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def test_a_question_resent_with_its_key_is_answered_once_even_after_the_actor_died(
    ray_set: RaySet,
) -> None:
    repo, before, seen = _answered_once(ray_set, "resent")

    # One send, the actor's process killed, the same key sent twice to the restarted actor.
    first, *resent, pids = _probe(ray_set, repo, "key-1")

    assert first["error"] is None and first["answer"].startswith("ray answer"), first
    assert resent == [first, first]  # the logged answer, not a new one
    bodies = [str(r.body) for r in ray_set.fake.requests[seen:]]
    assert any("RESENT-QUESTION" in b for b in bodies)
    assert not any("RESENT-AGAIN" in b for b in bodies)  # the re-sends asked no model
    stats = _stats(ray_set.a.url, repo)
    assert stats["questions_answered"] == before["questions_answered"] + 1
    assert stats["cost_usd"] == pytest.approx(before["cost_usd"] + first["cost_usd"])
    assert pids["pid"] != pids["killed_pid"]
    assert _host_row(ray_set.a.url, repo)["restarted"] is True


def test_a_lost_node_s_workspace_is_answered_from_its_snapshot_on_the_other_node(
    ray_set: RaySet,
) -> None:
    resource = checkout_resource(str(ray_set.checkouts))
    node = ray_set.cluster.add_node({resource: 1000})  # it can read the same checkouts
    nodes = _until("two live nodes", lambda: len(n := _rows(ray_set.a.url, "ray_node")) == 2 and n)
    head = next(n for n in nodes if n["head"])
    second = next(n for n in nodes if not n["head"])
    shaped = [
        {"NodeID": n["node_id"], "Alive": True, "Resources": {resource: 1000.0}} for n in nodes
    ]
    # A repository the placement puts on the second node (rendezvous on the root).
    name = next(
        f"lost-{i}"
        for i in range(256)
        if choose_node(os.path.realpath(ray_set.checkouts / f"lost-{i}"), resource, shaped)
        == second["node_id"]
    )
    repo = make_repo(ray_set.checkouts / name, {"src/app.py": "def answer():\n    return 42\n"})
    first = _ask(ray_set.a.url, repo, "QUESTION-BEFORE-NODE-LOSS?")
    written = "MARK_N = 'written before the node was lost'\n"
    (repo / "src" / "extra.py").write_text(written)
    notified = _notify(ray_set.b.url, repo, "src/extra.py", written)
    assert first.status_code == 200 and notified.json()["accepted"] == 1
    assert _host_row(ray_set.a.url, repo)["node_id"] == second["node_id"]
    assert "src/extra.py" in _snapshot_files(ray_set, repo)  # acknowledged = durable

    node.kill()  # the whole raylet with its workers: the machine is gone
    after = _ask(ray_set.b.url, repo, "after the node loss?")

    assert after.status_code == 200, after.text
    assert "QUESTION-BEFORE-NODE-LOSS?" in _prompt_of_last_call(ray_set)
    row = _host_row(ray_set.a.url, repo)
    assert row["node_id"] == head["node_id"] and row["restarted"] is True
    stats = _stats(ray_set.a.url, repo)
    assert stats["questions_answered"] == 2 and stats["file_contexts"]["loaded"] == 1
    assert [n["node_id"] for n in _rows(ray_set.a.url, "ray_node")] == [head["node_id"]]
