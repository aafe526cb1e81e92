"""The Ray backend end to end: a real local Ray cluster, two real gateways, the scripted fake
model over HTTP, real git repositories. No mocks: questions over MCP and REST, notifications,
the cluster's actor inventory, a workspace actor's process killed by its pid, and a root no
node holds."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from live_memory.ray_backend import checkout_resource
from tests.ray.conftest import RaySet
from tests.support import loopback
from tests.support.mcp_client import call_tool
from tests.support.repo import make_repo

DEPLOY = Path(__file__).resolve().parents[2] / "deploy" / "ray"

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(600)]


def _ask(url: str, repo: Path, question: str) -> httpx.Response:
    return loopback.post(
        f"{url}/api/ask", json={"question": question, "cwd": str(repo)}, timeout=120
    )


def _notify(url: str, repo: Path, path: str, content: str) -> httpx.Response:
    event = {"path": path, "kind": "read", "content": content}
    return loopback.post(f"{url}/notify", json={"cwd": str(repo), "events": [event]}, timeout=120)


def _host_row(url: str, repo: Path) -> dict[str, object]:
    rows = loopback.get(f"{url}/actors", timeout=60).json()
    hosts = [
        r for r in rows if r.get("kind") == "ray_workspace_host" and r.get("root") == str(repo)
    ]
    assert len(hosts) == 1, rows
    return dict(hosts[0])


def _stats(url: str, repo: Path) -> dict[str, Any]:
    reply = loopback.get(f"{url}/stats", params={"cwd": str(repo)}, timeout=60)
    assert reply.status_code == 200, reply.text
    return dict(reply.json())


def _snapshot_files(ray_set: RaySet, repo: Path) -> list[str]:
    for path in (ray_set.data_dir / "workspaces").glob("*.json"):
        document = orjson.loads(path.read_bytes())
        if document["root"] == str(repo):
            return [f["path"] for f in document["state"]["files"]]
    raise AssertionError(f"no snapshot of {repo}")


def _prompt_of_last_call(ray_set: RaySet) -> str:
    return str(ray_set.fake.requests[-1].body)


def test_questions_over_rest_and_mcp_are_answered_by_one_workspace_actor(
    ray_set: RaySet,
) -> None:
    repo = ray_set.repo("asked")

    rest = _ask(ray_set.a.url, repo, "What does answer return?")
    is_error, text = call_tool(
        ray_set.b.url, "ask_live_memory", {"question": "And over MCP?", "cwd": str(repo)}
    )

    assert rest.status_code == 200, rest.text
    assert rest.json()["answer"].startswith("ray answer")
    assert not is_error and text.startswith("ray answer"), text
    stats_a = loopback.get(f"{ray_set.a.url}/stats", params={"cwd": str(repo)}, timeout=60).json()
    stats_b = loopback.get(f"{ray_set.b.url}/stats", params={"cwd": str(repo)}, timeout=60).json()
    assert stats_a["questions_answered"] == stats_b["questions_answered"] == 2


def test_a_notification_through_one_gateway_reaches_a_question_through_the_other(
    ray_set: RaySet,
) -> None:
    repo = ray_set.repo("shared")
    assert _ask(ray_set.a.url, repo, "first?").status_code == 200

    notified = _notify(ray_set.b.url, repo, "src/app.py", "def answer():\n    return 'MARK-B'\n")
    answered = _ask(ray_set.a.url, repo, "what now?")

    assert notified.status_code == 200 and notified.json()["accepted"] == 1, notified.text
    assert answered.status_code == 200, answered.text
    assert "MARK-B" in _prompt_of_last_call(ray_set)


def test_actors_lists_the_clusters_workspace_actors_with_their_node(ray_set: RaySet) -> None:
    repo = ray_set.repo("listed")
    assert _ask(ray_set.a.url, repo, "listed?").status_code == 200

    rows = loopback.get(f"{ray_set.b.url}/actors", timeout=60).json()

    host = _host_row(ray_set.b.url, repo)
    assert host["node_ip"] and len(str(host["node_id"])) == 56 and host["pid"]
    inner = [r for r in rows if r.get("kind") == "workspace" and r.get("workspace") == str(repo)]
    assert inner and inner[0]["node_id"] == host["node_id"]


def test_a_killed_workspace_actor_restores_its_snapshot_and_loses_nothing_acknowledged(
    ray_set: RaySet,
) -> None:
    repo = ray_set.repo("killed")
    first = _ask(ray_set.a.url, repo, "QUESTION-BEFORE-KILL?")
    # An agent wrote a file and the hook tees it: held only because of the notification (a
    # restore keeps held content that still matches the disk, and re-reads nothing else).
    written = "MARK_K = 'written after the first question'\n"
    (repo / "src" / "extra.py").write_text(written)
    notified = _notify(ray_set.b.url, repo, "src/extra.py", written)
    assert first.status_code == 200 and notified.json()["accepted"] == 1
    before = _host_row(ray_set.a.url, repo)

    # Acknowledged means durable: the snapshot on the shared data directory has it already.
    assert "src/extra.py" in _snapshot_files(ray_set, repo)
    held = _stats(ray_set.a.url, repo)["file_contexts"]

    os.kill(int(str(before["pid"])), signal.SIGKILL)
    after_kill = _ask(ray_set.b.url, repo, "after the kill?")

    assert after_kill.status_code == 200, after_kill.text
    assert "QUESTION-BEFORE-KILL?" in _prompt_of_last_call(ray_set)  # the answered history
    after = _host_row(ray_set.a.url, repo)
    assert after["pid"] != before["pid"] and after["restarted"] is True
    stats = _stats(ray_set.a.url, repo)
    assert stats["questions_answered"] == 2
    # The notified file is still known (restored from the manifest; its content is re-read
    # on demand, as after any restart).
    assert stats["file_contexts"]["loaded"] == held["loaded"] == 1


def test_a_root_no_node_holds_is_refused_with_the_resource_to_add(ray_set: RaySet) -> None:
    with tempfile.TemporaryDirectory(prefix="lm-nowhere-") as elsewhere:
        repo = make_repo(Path(elsewhere) / "repo", {"a.py": "x = 1\n"})

        refused = _ask(ray_set.a.url, repo, "anyone?")

    assert refused.status_code == 503, refused.text
    assert "no Ray node holds the checkout" in refused.json()["error"]
    assert "live_memory_checkout_" in refused.json()["error"]


def test_the_deploy_smoke_script_sees_one_memory_behind_two_gateways(ray_set: RaySet) -> None:
    repo = ray_set.repo("smoke", {"README.md": "# smoke\n", "a.py": "x = 1\n"})

    done = subprocess.run(
        [sys.executable, str(DEPLOY / "smoke.py"), ray_set.a.url, ray_set.b.url, str(repo)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )

    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().endswith("smoke: ok")


def test_the_local_example_scripts_are_valid_and_name_the_checkout_resource(
    ray_set: RaySet,
) -> None:
    subprocess.run(["bash", "-n", str(DEPLOY / "run-local.sh")], check=True, timeout=30)
    printed = subprocess.run(
        [sys.executable, str(DEPLOY / "checkout_resources.py"), str(ray_set.checkouts)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )

    assert orjson.loads(printed.stdout) == {checkout_resource(str(ray_set.checkouts)): 1000}
