"""Memory that stays true, through the real server over MCP: a held file edited outside any
agent (a real git repo, the FileChanged hook and the OS watcher) is re-read by the server and
its new content is in the next prompt without a model tool call, append-only; a secret in it
is redacted, a file grown past the cap stays "stale", and the earlier answer is named."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import provider_env
from tests.support.app_server import AppServer, RunningServer
from tests.support.fakes import FakeProvider, Text
from tests.support.fixtures import HOOK_PAYLOADS
from tests.support.mcp_client import call_tool
from tests.support.prompts import without_cache_control as _strip

pytestmark = pytest.mark.e2e

AWS_KEY = "AKIA" + "QWERTYUIOPASDFGH"
WITHIN_S = 30.0  # generous: a loaded 2-core machine; the wait ends as soon as it is seen
QUESTION = "What does answer() return?"


def _file_changed(repo: Path, rel: str) -> dict[str, Any]:
    payload = json.loads(HOOK_PAYLOADS.read_text())["FileChanged(change)"]["stdin"]
    return dict(payload) | {"cwd": str(repo), "file_path": str(repo / rel)}


def _freshness(server: RunningServer, repo: Path) -> dict[str, Any]:
    stats = server.request("GET", "/stats", params={"cwd": str(repo)}).json()
    return dict(stats["freshness"])


def _wait_until_reread(server: RunningServer, repo: Path) -> dict[str, Any]:
    deadline = time.monotonic() + WITHIN_S
    while True:
        fresh = _freshness(server, repo)
        done = fresh["refreshed"] >= 1 and fresh["kept_stale"] >= 1 and fresh["waiting"] == 0
        if done or time.monotonic() > deadline:
            return fresh
        time.sleep(0.05)  # polling the server's view; there is no event to wait on


def _hold_and_ask(server: RunningServer, repo: Path, paths: tuple[str, ...]) -> None:
    """A fresh workspace holding `paths` (teed reads), then QUESTION asked over MCP."""
    assert server.request("POST", "/clear", json={"cwd": str(repo)}).status_code == 200
    held = [{"path": p, "kind": "read", "content": (repo / p).read_text()} for p in paths]
    reply = server.request("POST", "/notify", json={"cwd": str(repo), "events": held})
    assert reply.json() == {"accepted": len(paths), "ignored": 0}
    is_error, first = call_tool(
        server.url, "ask_live_memory", {"question": QUESTION, "cwd": str(repo)}
    )
    assert not is_error, first


def test_an_external_edit_of_a_held_file_is_in_the_next_prompt_without_a_tool_call(
    fake: FakeProvider, repo: Path, tmp_path: Path
) -> None:
    (repo / "src" / "big.py").write_text("SMALL = 1\n")
    fake.script(Text("answer() in src/app.py returns 42."), Text("It now returns 43."))
    env = provider_env(fake, "anthropic") | {"LIVE_MEMORY_WATCHER": "os"}
    with AppServer(tmp_path / "data", env) as server:
        _hold_and_ask(server, repo, ("src/app.py", "src/big.py"))
        # Edited outside any agent: app.py through the FileChanged hook (and the watcher),
        # big.py grown past what the window holds, seen by the watcher alone.
        (repo / "src" / "app.py").write_text(f"KEY = '{AWS_KEY}'\ndef answer():\n    return 43\n")
        (repo / "src" / "big.py").write_text("# padding line\n" * 20_000)
        hook = server.request("POST", "/notify", json=_file_changed(repo, "src/app.py"))
        assert hook.status_code == 200 and hook.json()["accepted"] == 1, hook.text
        fresh = _wait_until_reread(server, repo)
        assert fresh["refreshed"] >= 1 and fresh["kept_stale"] >= 1, fresh
        is_error, second = call_tool(
            server.url, "ask_live_memory", {"question": "And now?", "cwd": str(repo)}
        )
        assert not is_error, second
        stats = server.request("GET", "/stats", params={"cwd": str(repo)}).json()
    assert len(fake.requests) == 2  # one model call per question: no tool call, no re-ask
    assert "tool_calls=0" in second
    before, after = (_strip(r.body) for r in fake.requests)
    prefix = before["messages"][:-1]
    assert after["messages"][: len(prefix)] == prefix  # append-only: the cached prefix holds
    added = "\n".join(c["text"] for m in after["messages"][len(prefix) :] for c in m["content"])
    assert "return 43" in added  # the new content, re-read by the server itself
    assert AWS_KEY not in json.dumps(after, ensure_ascii=False)  # redacted on the way in
    assert "src/big.py — CHANGED" in added  # over the cap: flagged, not held
    assert f'src/app.py changed after you answered "{QUESTION}"' in added
    assert stats["file_contexts"]["stale"] == 1 and stats["freshness"]["answer_notes"] >= 1


def test_answers_citing_a_file_are_named_after_a_restart(
    fake: FakeProvider, repo: Path, tmp_path: Path
) -> None:
    """The answer -> paths links live in the snapshot: after the server restarts, a file the
    earlier answer cited that changed while it was down is named at once, and one that changes
    after the restart (the FileChanged hook) is named too."""
    fake.script(
        Text("answer() in src/app.py returns 42; shout() is in src/util/strings.py."),
        Text("Re-checked."),
    )
    env = provider_env(fake, "anthropic")
    with AppServer(tmp_path / "data", env) as server:
        _hold_and_ask(server, repo, ("src/app.py", "src/util/strings.py"))
        tracked = _freshness(server, repo)["answers_tracked"]
        assert tracked == 1
    (repo / "src/util/strings.py").write_text("def shout(text):\n    return text + '!'\n")
    with AppServer(tmp_path / "data", env) as server:  # restarted from its snapshot
        assert _freshness(server, repo)["answers_tracked"] == 1
        (repo / "src/app.py").write_text("def answer():\n    return 43\n")
        hook = server.request("POST", "/notify", json=_file_changed(repo, "src/app.py"))
        assert hook.status_code == 200 and hook.json()["accepted"] == 1, hook.text
        is_error, second = call_tool(
            server.url, "ask_live_memory", {"question": "And now?", "cwd": str(repo)}
        )
        assert not is_error, second
        fresh = _freshness(server, repo)
    prompt = json.dumps(_strip(fake.requests[-1].body)["messages"], ensure_ascii=False)
    for path in ("src/util/strings.py", "src/app.py"):
        assert f'{path} changed after you answered \\"{QUESTION}\\"' in prompt, path
    assert fresh["answer_notes"] == 2
