"""plugin/scripts/statusline.py and live-memory-command.py: what the user reads."""

from __future__ import annotations

import json

from tests.plugin.capture_server import CaptureServer, Seen, closed_port
from tests.plugin.conftest import HookWorld, run_script

STATS = {"context": {"fill_pct": 42.5, "used_tokens": 1, "max_tokens": 2}, "cost_usd": 0.3125}
STATS_TEXT = "workspace  /repo\ncontext    85,000 / 200,000 tokens (42.5%)\n"


def _status_input(world: HookWorld) -> str:
    return json.dumps(
        {"cwd": "/elsewhere", "workspace": {"current_dir": "/x", "project_dir": str(world.project)}}
    )


def test_statusline_shows_fill_cost_and_answers_for_the_project(world: HookWorld) -> None:
    stats = {**STATS, "questions_answered": 12}
    with CaptureServer(respond=lambda seen: (200, stats)) as server:
        ran = run_script("statusline.py", _status_input(world), world.at(server.port))
        (seen,) = server.wait_for(1)
    assert ran.returncode == 0
    assert ran.stdout == "live-memory 42% · $0.31 · 12 answers\n"
    assert seen.path == "/stats" and seen.query == {"cwd": str(world.project)}


def test_statusline_says_subscription_new_or_down(world: HookWorld) -> None:
    subscription = {**STATS, "cost_usd": None}
    with CaptureServer(respond=lambda seen: (200, subscription)) as server:
        ran = run_script("statusline.py", _status_input(world), world.at(server.port))
    assert ran.stdout == "live-memory 42% · subscription\n"
    one = {**STATS, "questions_answered": 1}
    with CaptureServer(respond=lambda seen: (200, one)) as server:
        ran = run_script("statusline.py", _status_input(world), world.at(server.port))
    assert ran.stdout == "live-memory 42% · $0.31 · 1 answer\n"
    with CaptureServer(respond=lambda seen: (404, {"error": "no memory"})) as server:
        ran = run_script("statusline.py", _status_input(world), world.at(server.port))
    assert ran.stdout == "live-memory: new workspace\n"
    ran = run_script("statusline.py", "garbage", world.at(closed_port()))
    assert (ran.returncode, ran.stdout) == (0, "live-memory: down\n")


def test_stats_command_prints_the_servers_text_table(world: HookWorld) -> None:
    with CaptureServer(respond=lambda seen: (200, STATS_TEXT)) as server:
        ran = run_script("live-memory-command.py", "", world.at(server.port), ("stats",))
        (seen,) = server.wait_for(1)
    assert ran.returncode == 0
    assert ran.stdout == STATS_TEXT
    assert seen.query == {"cwd": str(world.project), "format": "text"}


def test_stats_command_on_a_new_workspace_explains_instead_of_failing(world: HookWorld) -> None:
    with CaptureServer(respond=lambda seen: (404, {"error": "no memory"})) as server:
        ran = run_script("live-memory-command.py", "", world.at(server.port), ("stats",))
    assert ran.returncode == 0
    assert ran.stdout == (
        f"live-memory has no memory of {world.project} yet: it starts with the first question.\n"
    )


def test_reset_and_empty_commands_post_the_workspace(world: HookWorld) -> None:
    def respond(seen: Seen) -> tuple[int, object]:
        return 200, {"status": "ok"}

    with CaptureServer(respond=respond) as server:
        reset = run_script("live-memory-command.py", "", world.at(server.port), ("reset",))
        other = world.project / "sub"
        other.mkdir()
        empty = run_script(
            "live-memory-command.py", "", world.at(server.port), ("empty", str(other))
        )
        first, second = server.wait_for(2)
    assert (first.path, first.json()) == ("/reset", {"cwd": str(world.project)})
    assert (second.path, second.json()) == ("/clear", {"cwd": str(other)})
    assert reset.stdout == f"live-memory: memory of {world.project} wiped; preload files re-read.\n"
    assert empty.stdout == f"live-memory: memory of {other} emptied.\n"


def test_commands_with_the_server_down_say_how_to_start_it(world: HookWorld) -> None:
    port = closed_port()
    ran = run_script("live-memory-command.py", "", world.at(port), ("reset",))
    assert ran.returncode == 0
    assert ran.stdout == (
        f"live-memory server is not running at http://127.0.0.1:{port}; start it with "
        "`live-memory serve` (or `live-memory install-service`)\n"
    )
