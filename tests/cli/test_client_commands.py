"""The commands that talk to a running server: output, flags, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import REPO, cli
from tests.plugin.capture_server import CaptureServer, Seen, closed_port
from tests.support.app_server import AppServer

pytestmark = pytest.mark.e2e

HEALTH = {
    "status": "ok",
    "version": "0.1.0",
    "uptime_s": 3725.0,
    "workspaces_active": 2,
    "provider": "anthropic",
    "model": "claude-haiku-4-5",
}


def test_status_against_a_real_server_prints_a_summary_or_json(real_server: AppServer) -> None:
    human = cli(["status", "--server", real_server.url])
    assert human.code == 0, human.err
    assert human.out.startswith(f"live-memory 0.1.0 at {real_server.url}: no_provider\n")
    assert "provider     none configured" in human.out
    machine = cli(["--json", "status", "--server", real_server.url])
    assert machine.code == 0
    assert json.loads(machine.out)["version"] == "0.1.0"


def test_actors_lists_the_gateway_actor(real_server: AppServer) -> None:
    listed = cli(["actors", "--server", real_server.url])
    assert listed.code == 0, listed.err
    header, *rows = listed.out.splitlines()
    assert header.split()[:3] == ["NAME", "KIND", "MAILBOX"]
    assert any(row.split()[:2] == ["gateway", "gateway"] for row in rows)
    machine = cli(["actors", "--json", "--server", real_server.url])
    assert any(actor["kind"] == "gateway" for actor in json.loads(machine.out))


def test_a_server_error_exits_1_with_its_message(real_server: AppServer, tmp_path: Path) -> None:
    result = cli(["stats", "--cwd", str(tmp_path), "--server", real_server.url])
    assert result.code == 1
    assert result.err.startswith("live-memory: ")
    assert result.err.endswith(" (HTTP 404)\n")
    assert str(tmp_path) in result.err  # the server's error names the workspace


def test_a_refused_root_exits_1_naming_the_setting_that_allows_it(
    real_server: AppServer,
) -> None:
    home = str(real_server.data_dir / "home")  # the server's $HOME
    for argv in (["ask", "hi", "--cwd", "/"], ["empty", "--cwd", home], ["stats", "--cwd", "/"]):
        result = cli([*argv, "--server", real_server.url])
        assert result.code == 1, argv
        assert "LIVE_MEMORY_ALLOWED_ROOTS" in result.err and "(HTTP 403)" in result.err, argv


@pytest.mark.parametrize(
    "argv",
    [
        ["status"],
        ["stats"],
        ["stats", "--by-day"],
        ["ask", "where is main?"],
        ["actors"],
        ["reset"],
        ["empty"],
        ["export"],
    ],
)
def test_no_server_at_the_url_exits_3_with_the_start_hint(argv: list[str]) -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    result = cli([*argv, "--server", url])
    assert result.code == 3
    assert result.out == ""
    assert result.err == (
        f"live-memory: the server is not running at {url}; start it with `live-memory serve` "
        "(or keep one running: `live-memory install-service`)\n"
    )


def test_the_default_server_url_follows_host_and_port_variables() -> None:
    port = closed_port()
    result = cli(["status"], {"LIVE_MEMORY_HOST": "0.0.0.0", "LIVE_MEMORY_PORT": str(port)})
    assert result.code == 3
    assert f"not running at http://127.0.0.1:{port};" in result.err


@pytest.mark.parametrize(
    ("argv", "env", "message"),
    [
        (["status"], {"LIVE_MEMORY_PORT": "abc"}, "LIVE_MEMORY_PORT must be an integer 1-65535"),
        (["status"], {"LIVE_MEMORY_HOST": "a b"}, "LIVE_MEMORY_HOST must be a name without"),
        (
            ["status", "--server", "http://127.0.0.1:abc"],
            {},
            "--server 'http://127.0.0.1:abc' is not a usable URL: its port must be a number",
        ),
        (["stats", "--server", "http://[::1"], {}, "--server 'http://[::1' is not a usable URL"),
        (["ask", "q", "--server", "localhost:7711"], {}, "it must look like http://HOST:PORT"),
        (["empty", "--all", "--server", "http://h:99999"], {}, "its port must be a number"),
    ],
)
def test_a_bad_server_url_is_a_usage_error_not_a_traceback(
    argv: list[str], env: dict[str, str], message: str
) -> None:
    result = cli(argv, env)
    assert (result.code, result.out) == (2, "")
    assert result.err.startswith("live-memory: ") and message in result.err, result.err
    as_json = cli([*argv, "--json"], env)
    assert as_json.code == 2
    error = json.loads(as_json.out)["error"]
    assert error["exit_code"] == 2 and message in error["message"] and error["status"] is None


def test_a_bad_port_variable_gives_one_line_and_no_traceback_from_the_installed_command(
    tmp_path: Path,
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "live_memory.cli", "status"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO), "LIVE_MEMORY_PORT": "abc"},
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr == "live-memory: LIVE_MEMORY_PORT must be an integer 1-65535, got abc\n"


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["bogus"],
        ["ask"],
        ["ask", "q", "--max-answer-tokens", "0"],
        ["stats", "--cwd", "/no/such/directory/anywhere"],
        ["serve", "--port", "70000"],
        ["config"],
        ["config", "set"],
        ["config", "set", "no-equals-sign"],
    ],
)
def test_usage_errors_exit_2(argv: list[str]) -> None:
    result = cli([*argv, "--server", f"http://127.0.0.1:{closed_port()}"] if argv else argv)
    assert result.code == 2
    assert "usage" in result.err or result.err.startswith("live-memory: expected")


def test_server_and_json_flags_work_before_and_after_the_subcommand() -> None:
    with CaptureServer(respond=lambda seen: (200, HEALTH)) as server:
        before = cli(["--server", server.url, "--json", "status"])
        after = cli(["status", "--server", server.url, "--json"])
    assert before.code == after.code == 0
    assert json.loads(before.out) == json.loads(after.out) == HEALTH


def test_status_renders_uptime_and_workspaces_for_people() -> None:
    with CaptureServer(respond=lambda seen: (200, HEALTH)) as server:
        result = cli(["status", "--server", server.url])
    assert result.out.splitlines() == [
        f"live-memory 0.1.0 at {server.url}: ok",
        "  uptime       1h 2m",
        "  provider     anthropic",
        "  model        claude-haiku-4-5",
        "  workspaces   2 active",
    ]


def test_cwd_defaults_to_the_current_directory_made_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with CaptureServer(respond=lambda seen: (200, "table\n")) as server:
        result = cli(["stats", "--server", server.url])
        relative = cli(["stats", "--cwd", ".", "--server", server.url])
        first, second = server.wait_for(2)
    assert result.code == relative.code == 0
    assert first.query == second.query == {"cwd": str(tmp_path), "format": "text"}
    assert result.out == "table\n"


def test_stats_json_passes_the_servers_answer_through(tmp_path: Path) -> None:
    stats = {"workspace": str(tmp_path), "questions_answered": 2}

    def respond(seen: Seen) -> tuple[int, object]:
        return 200, stats  # a server that ignores format=text still renders

    with CaptureServer(respond=respond) as server:
        machine = cli(["stats", "--json", "--cwd", str(tmp_path), "--server", server.url])
        human = cli(["stats", "--cwd", str(tmp_path), "--server", server.url])
        first, second = server.wait_for(2)
    assert json.loads(machine.out) == stats
    assert first.query == {"cwd": str(tmp_path)}
    assert second.query == {"cwd": str(tmp_path), "format": "text"}
    assert human.out.splitlines() == [
        f"workspace           {tmp_path}",
        "questions_answered  2",
    ]


def test_ask_posts_the_question_and_prints_the_answer_with_its_trailer(tmp_path: Path) -> None:
    reply = {"answer": "In src/app.py.", "text": "In src/app.py.\n---\n[live-memory] model=m"}
    with CaptureServer(respond=lambda seen: (200, reply)) as server:
        env = {"LIVE_MEMORY_TOKEN": "tok"}
        argv = ["ask", "Where is main?", "--cwd", str(tmp_path), "--max-answer-tokens", "300"]
        human = cli([*argv, "--server", server.url], env)
        machine = cli([*argv, "--json", "--server", server.url], env)
        (seen, _) = server.wait_for(2)
    assert (seen.method, seen.path) == ("POST", "/api/ask")
    assert seen.json() == {
        "question": "Where is main?",
        "cwd": str(tmp_path),
        "max_answer_tokens": 300,
    }
    assert seen.headers["authorization"] == "Bearer tok"
    assert human.out == reply["text"] + "\n"
    assert json.loads(machine.out) == reply


def test_reset_and_empty_post_the_workspace_to_reset_and_clear(tmp_path: Path) -> None:
    with CaptureServer(respond=lambda seen: (200, {"status": "reset"})) as server:
        reset = cli(["reset", "--cwd", str(tmp_path), "--server", server.url])
        empty = cli(["empty", "--cwd", str(tmp_path), "--server", server.url, "--json"])
        first, second = server.wait_for(2)
    assert (first.path, first.json()) == ("/reset", {"cwd": str(tmp_path)})
    assert (second.path, second.json()) == ("/clear", {"cwd": str(tmp_path)})
    assert reset.out == f"{tmp_path}: reset: memory wiped, preload re-read\n"
    assert json.loads(empty.out) == {"status": "reset"}


def test_client_commands_do_not_import_the_server() -> None:
    probe = "import sys, live_memory.cli; print(sorted(m for m in sys.modules if 'gateway' in m))"
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=60,
        check=True,
    )
    assert done.stdout.strip() == "[]"
