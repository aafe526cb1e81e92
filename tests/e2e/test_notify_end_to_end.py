"""File-change awareness through the real server: hooks, secrets, notifications mid-question."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import provider_env
from tests.support import loopback
from tests.support.app_server import AppServer, RunningServer
from tests.support.fakes import FakeProvider, Text, ToolUse
from tests.support.fixtures import HOOK_PAYLOADS

pytestmark = pytest.mark.e2e

FAKE_KEY = "sk-ant-api03-" + "Zx8" * 30
AWS_KEY = "AKIA" + "QWERTYUIOPASDFGH"


def _activate(server: RunningServer, repo: Path) -> None:
    """A notification alone creates no workspace (only a question, a reset or a clear does)."""
    assert server.request("POST", "/clear", json={"cwd": str(repo)}).status_code == 200


def _hook_payload(name: str, repo: Path) -> dict[str, Any]:
    payloads = json.loads(HOOK_PAYLOADS.read_text())
    text = json.dumps(payloads[name]["stdin"]).replace("/home/dev/project", str(repo))
    return dict(json.loads(text))


def test_a_teed_read_is_answered_without_tools_and_reaches_the_provider(
    fake: FakeProvider, repo: Path, tmp_path: Path
) -> None:
    (repo / "input.txt").write_text("hello from input.txt: the answer is 42\n")
    fake.script(Text("input.txt says the answer is 42."))
    with AppServer(tmp_path / "data", provider_env(fake, "anthropic")) as server:
        _activate(server, repo)
        reply = server.request("POST", "/notify", json=_hook_payload("PostToolUse(Read)", repo))
        assert reply.json() == {"accepted": 1, "ignored": 0}
        answer = server.request(
            "POST", "/api/ask", json={"question": "What is the answer?", "cwd": str(repo)}
        ).json()
    assert answer["tool_calls"] == 0
    assert "the answer is 42" in json.dumps(fake.requests[0].body)


def test_bad_notify_bodies_get_a_4xx_naming_the_problem_and_lose_nothing(
    fake: FakeProvider, repo: Path, tmp_path: Path
) -> None:
    with AppServer(tmp_path / "data", provider_env(fake, "anthropic")) as server:
        good = {"cwd": str(repo), "events": [{"path": "a.py", "kind": "read", "content": "x"}]}
        # Before any question the workspace does not exist, and a notification creates nothing.
        assert server.request("POST", "/notify", json=good).json() == {"accepted": 0, "ignored": 1}
        assert server.request("GET", "/stats", params={"cwd": str(repo)}).status_code == 404
        assert server.request("GET", "/health").json()["workspaces_active"] == 0
        _activate(server, repo)
        assert server.request("POST", "/notify", json=good).json() == {"accepted": 1, "ignored": 0}
        cases = [
            (b"not json", 422, "JSON"),
            (b"[]", 422, "object"),
            (json.dumps({"events": []}).encode(), 422, "cwd"),
            (
                json.dumps({"cwd": "rel", "events": [{"path": "a", "kind": "read"}]}).encode(),
                422,
                "absolute",
            ),
            (
                json.dumps({"cwd": str(repo), "events": [{"path": "a", "kind": "boom"}]}).encode(),
                422,
                "kind",
            ),
            (json.dumps({"cwd": str(repo), "events": [{"kind": "read"}]}).encode(), 422, "path"),
            (
                json.dumps({"cwd": str(repo), "events": [{"path": "a"}] * 5000}).encode(),
                413,
                "LIVE_MEMORY_MAX_NOTIFY_EVENTS",
            ),
            (
                json.dumps({"cwd": str(repo), "hook_event_name": "SessionStart"}).encode(),
                422,
                "SessionStart",
            ),
        ]
        for body, status, word in cases:
            reply = server.request(
                "POST", "/notify", content=body, headers={"content-type": "application/json"}
            )
            assert reply.status_code == status, (body[:80], reply.text)
            assert word in reply.json()["error"], reply.text
        stats = server.request("GET", "/stats", params={"cwd": str(repo)}).json()
    assert stats["file_contexts"]["with_content"] == 1


def test_planted_secrets_never_reach_the_provider(
    fake: FakeProvider, repo: Path, tmp_path: Path
) -> None:
    (repo / ".env").write_text(f"ANTHROPIC_API_KEY={FAKE_KEY}\n")
    source = f'AWS_ACCESS_KEY_ID = "{AWS_KEY}"\nTOKEN = "{FAKE_KEY}"\ndef ok():\n    return 1\n'
    (repo / "src" / "settings.py").write_text(source)
    fake.script(
        ToolUse("Read", {"file_path": ".env"}),
        ToolUse("Read", {"file_path": "src/settings.py"}),
        ToolUse("Grep", {"pattern": "sk-ant", "output_mode": "content"}),
        ToolUse("Grep", {"pattern": "AKIA", "output_mode": "content", "path": "."}),
        Text("done"),
    )
    with AppServer(tmp_path / "data", provider_env(fake, "anthropic")) as server:
        events = [
            {"path": ".env", "kind": "read", "content": (repo / ".env").read_text()},
            {"path": "src/settings.py", "kind": "write", "content": source},
        ]
        _activate(server, repo)
        server.request("POST", "/notify", json={"cwd": str(repo), "events": events})
        reply = server.request("POST", "/api/ask", json={"question": "keys?", "cwd": str(repo)})
        assert reply.status_code == 200
    everything = "".join(r.raw.decode() for r in fake.requests)
    assert FAKE_KEY not in everything and AWS_KEY not in everything
    assert "def ok()" in everything  # ordinary code still reaches the model


def test_notifications_during_a_slow_question_survive_its_commit(
    fake: FakeProvider, repo: Path, tmp_path: Path
) -> None:
    count = 5000
    fake.script(Text("slow answer", delay_s=2.0), Text("next answer"))
    with AppServer(tmp_path / "data", provider_env(fake, "anthropic")) as server:
        warm = {"path": "src/app.py", "kind": "read", "content": "def answer(): 42"}
        _activate(server, repo)
        server.request("POST", "/notify", json={"cwd": str(repo), "events": [warm]})
        result: list[httpx.Response] = []
        asker = threading.Thread(
            target=lambda: result.append(
                server.request("POST", "/api/ask", json={"question": "slow?", "cwd": str(repo)})
            )
        )
        asker.start()
        fake.wait_for_requests(1, timeout_s=60)
        accepted = 0
        with loopback.client(base_url=server.url, timeout=30) as client:
            for start in range(0, count, 500):
                events = [
                    {"path": f"gen/f{i}.py", "kind": "read", "content": f"VALUE_{i} = {i}\n"}
                    for i in range(start, start + 500)
                ]
                accepted += client.post(
                    "/notify", json={"cwd": str(repo), "events": events}
                ).json()["accepted"]
        asker.join(timeout=30)
        assert result and result[0].json()["answer"] == "slow answer"
        stats = server.request("GET", "/stats", params={"cwd": str(repo)}).json()
        server.request("POST", "/api/ask", json={"question": "next?", "cwd": str(repo)})
    assert accepted == count
    assert stats["messages_retained"] == 2
    assert stats["file_contexts"]["with_content"] == count + 1
    last = json.dumps(fake.requests[-1].body)
    assert "VALUE_0 = 0" in last and f"VALUE_{count - 1} = {count - 1}" in last
