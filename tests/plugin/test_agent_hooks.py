"""The shared hook client run as each agent runs it (`notify.py AGENT`, `session-start.py
AGENT`), fed payloads shaped as the agents document them (Gemini CLI's AfterTool, Cursor's
beforeReadFile/afterFileEdit, OpenCode's tool events as plugin/scripts/opencode-plugin.js
passes them, Codex's PostToolUse): reads and edits reach /notify as canonical batches with
the file's bytes, and each agent gets the stdout it reads."""

from __future__ import annotations

import json
from pathlib import Path

from tests.plugin.capture_server import CaptureServer, Seen
from tests.plugin.conftest import HookWorld, Ran, run_script

INPUT = "hello from input.txt: the answer is 42\n"


def _notify(world: HookWorld, server: CaptureServer, agent: str, payload: object) -> Ran:
    ran = run_script("notify.py", json.dumps(payload), world.at(server.port), (agent,))
    assert ran.returncode == 0 and ran.stderr == "", ran.stderr
    return ran


def _batch(path: Path, kind: str, content: str | None, cwd: Path) -> dict[str, object]:
    event: dict[str, object] = {"path": str(path), "kind": kind}
    if content is not None:
        event["content"] = content
    return {"cwd": str(cwd), "events": [event]}


def test_gemini_after_tool_reads_and_edits_reach_notify_with_their_bytes(
    world: HookWorld, capture: CaptureServer
) -> None:
    base = {"session_id": "s1", "transcript_path": "", "cwd": str(world.project)}
    base |= {"hook_event_name": "AfterTool", "timestamp": "2026-01-01T00:00:00Z"}
    read = {**base, "tool_name": "read_file", "tool_input": {"file_path": "input.txt"}}
    read["tool_response"] = {"llmContent": INPUT}
    edit = {**base, "tool_name": "replace", "tool_input": {"file_path": "out.txt"}}
    shell = {**base, "tool_name": "run_shell_command", "tool_input": {"command": "ls"}}
    for payload in (read, shell, edit):
        assert _notify(world, capture, "gemini", payload).stdout == ""
    first, second = capture.wait_for(2)
    assert first.json() == _batch(world.project / "input.txt", "read", INPUT, world.project)
    on_disk = (world.project / "out.txt").read_text()
    assert second.json() == _batch(world.project / "out.txt", "write", on_disk, world.project)


def test_cursor_before_read_file_sends_its_content_and_allows_the_read(
    world: HookWorld, capture: CaptureServer
) -> None:
    common = {"conversation_id": "c1", "generation_id": "g1"}
    common["workspace_roots"] = [str(world.project)]  # type: ignore[assignment]
    read = {**common, "hook_event_name": "beforeReadFile"}
    read |= {"file_path": str(world.project / "input.txt"), "content": "as the agent has it\n"}
    ran = _notify(world, capture, "cursor", read)
    assert json.loads(ran.stdout) == {"permission": "allow"}
    edit = {**common, "hook_event_name": "afterFileEdit", "file_path": "out.txt"}
    edit["edits"] = [{"old_string": "a", "new_string": "b"}]  # type: ignore[assignment]
    assert _notify(world, capture, "cursor", edit).stdout == ""
    first, second = capture.wait_for(2)
    path = world.project / "input.txt"
    assert first.json() == _batch(path, "read", "as the agent has it\n", world.project)
    on_disk = (world.project / "out.txt").read_text()
    assert second.json() == _batch(world.project / "out.txt", "write", on_disk, world.project)


def test_cursor_is_allowed_to_read_even_when_the_server_is_down(world: HookWorld) -> None:
    payload = {"hook_event_name": "beforeReadFile", "file_path": "/x", "workspace_roots": ["/"]}
    ran = run_script("notify.py", json.dumps(payload), world.at(1), ("cursor",))
    assert ran.returncode == 0 and json.loads(ran.stdout) == {"permission": "allow"}


def test_opencode_plugin_events_reach_notify(world: HookWorld, capture: CaptureServer) -> None:
    cwd = str(world.project)
    read = {"hook_event_name": "tool.execute.before", "tool_name": "read", "cwd": cwd}
    read["tool_input"] = {"filePath": str(world.project / "input.txt")}  # type: ignore[assignment]
    edit = {"hook_event_name": "tool.execute.after", "tool_name": "edit", "cwd": cwd}
    edit["tool_input"] = {"filePath": str(world.project / "out.txt")}  # type: ignore[assignment]
    _notify(world, capture, "opencode", read)
    _notify(world, capture, "opencode", edit)
    first, second = capture.wait_for(2)
    assert first.json() == _batch(world.project / "input.txt", "read", INPUT, world.project)
    assert second.json()["events"][0]["kind"] == "write"  # type: ignore[index]


def test_an_agents_secret_file_read_sends_nothing(world: HookWorld, capture: CaptureServer) -> None:
    (world.project / ".env").write_text("API_KEY=sk-secret\n")
    read = {"hook_event_name": "beforeReadFile", "file_path": str(world.project / ".env")}
    read |= {"content": "API_KEY=sk-secret\n", "workspace_roots": [str(world.project)]}
    _notify(world, capture, "cursor", read)
    _notify(
        world,
        capture,
        "gemini",
        {
            "hook_event_name": "AfterTool",
            "tool_name": "read_file",
            "cwd": str(world.project),
            "tool_input": {"file_path": ".env"},
        },
    )
    marker = {"hook_event_name": "AfterTool", "tool_name": "read_file", "cwd": str(world.project)}
    _notify(world, capture, "gemini", {**marker, "tool_input": {"file_path": "input.txt"}})
    (only,) = capture.wait_for(1)
    assert "sk-secret" not in only.body.decode()


def test_codex_shell_commands_tee_the_files_they_name(
    world: HookWorld, capture: CaptureServer
) -> None:
    (world.project / ".env").write_text("API_KEY=sk-secret\n")
    base = {"hook_event_name": "PostToolUse", "tool_name": "Bash", "cwd": str(world.project)}
    command = "sed -n 1,80p input.txt .env ../outside.txt missing.txt && cat 'out.txt'"
    _notify(world, capture, "codex", {**base, "tool_input": {"command": command}})
    _notify(world, capture, "codex", {**base, "tool_input": {"command": "ls -la"}})
    argv = ["bash", "-lc", "cat input.txt"]
    _notify(world, capture, "codex", {**base, "tool_input": {"command": argv}})
    _notify(world, capture, "gemini", {"hook_event_name": "SessionEnd", "cwd": str(world.project)})
    first, second = capture.wait_for(2)
    on_disk = (world.project / "out.txt").read_text()
    assert first.json() == {
        "cwd": str(world.project),
        "events": [
            {"path": str(world.project / "input.txt"), "kind": "read", "content": INPUT},
            {"path": str(world.project / "out.txt"), "kind": "read", "content": on_disk},
        ],
    }
    assert second.json() == _batch(world.project / "input.txt", "read", INPUT, world.project)
    assert len(capture.requests) == 2


def _opening(agent: str, world: HookWorld, payload: dict[str, object]) -> tuple[Seen, object]:
    def respond(seen: Seen) -> tuple[int, object]:
        return 200, {"banner": "live-memory: ok", "summary": None}

    with CaptureServer(respond=respond) as server:
        ran = run_script("session-start.py", json.dumps(payload), world.at(server.port), (agent,))
        assert ran.returncode == 0, ran.stderr
        (seen,) = server.requests
    return seen, json.loads(ran.stdout)


def test_each_agents_session_start_opens_its_workspace_and_gets_its_output(
    world: HookWorld,
) -> None:
    project = str(world.project)
    seen, output = _opening("gemini", world, {"hook_event_name": "SessionStart", "cwd": project})
    assert (seen.method, seen.path) == ("POST", "/api/open")
    assert json.loads(seen.body) == {"cwd": project, "summary": False}
    assert isinstance(output, dict) and output["systemMessage"] == "live-memory: ok"
    specific = output["hookSpecificOutput"]
    assert "watchPaths" not in specific and project in specific["additionalContext"]
    payload = {"hook_event_name": "sessionStart", "workspace_roots": [project]}
    seen, output = _opening("cursor", world, payload)
    assert json.loads(seen.body)["cwd"] == project
    assert isinstance(output, dict) and list(output) == ["additional_context"]
    seen, output = _opening("codex", world, {"hook_event_name": "SessionStart", "cwd": project})
    assert isinstance(output, dict) and "hookSpecificOutput" in output


def test_a_hook_run_is_stamped_for_connect_list(world: HookWorld, capture: CaptureServer) -> None:
    _notify(world, capture, "gemini", {"hook_event_name": "AfterTool", "tool_name": "x"})
    assert (world.data / "fired" / "gemini").is_file()
