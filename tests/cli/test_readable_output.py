"""What people and scripts read: one-line actions, `status` in words, JSON on every outcome."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from live_memory.knowledge import export_ledger
from live_memory.memory import LedgerFact
from tests.cli.conftest import cli
from tests.plugin.capture_server import CaptureServer, closed_port
from tests.support.app_server import AppServer

pytestmark = pytest.mark.e2e

PROBLEM = (
    "no model provider is configured: set ANTHROPIC_API_KEY (or LIVE_MEMORY_API_KEY with "
    "LIVE_MEMORY_PROVIDER=openai and LIVE_MEMORY_BASE_URL for an OpenAI-compatible endpoint), "
    "or log in to Claude Code so that its subscription credential can be used"
)
HEALTH = {
    "status": "no_provider",
    "version": "0.1.0",
    "uptime_s": 65.0,
    "workspaces_active": 1,
    "provider": None,
    "model": None,
    "problem": PROBLEM,
    "budget": {
        "daily_usd": 5.0,
        "spent_today_usd": 0.42,
        "resets_at": "2026-12-02T00:00+00:00",
        "exhausted": False,
        "background_paused": False,
    },
    "usage_today": {
        "day": "2026-12-01",
        "questions": 3,
        "input": 12345,
        "output": 678,
        "cache_read": 0,
        "cache_write": 0,
        "cost_usd": 0.0213,
        "workspaces": 2,
    },
    "transcripts": {"pending": 1, "done": 3, "failed": 0},
}


def _git_repo(path: Path) -> Path:
    path.mkdir()
    subprocess.run(["git", "init", "-q", str(path)], check=True, timeout=30)
    return path


def test_status_shows_the_provider_problem_in_full_and_budget_and_usage_in_words() -> None:
    with CaptureServer(respond=lambda seen: (200, HEALTH)) as server:
        result = cli(["status", "--server", server.url])
    assert result.code == 0, result.err
    assert result.out.splitlines() == [
        f"live-memory 0.1.0 at {server.url}: no_provider",
        "  uptime       1m 5s",
        "  provider     none configured",
        f"  problem      {PROBLEM}",
        "  model        -",
        "  workspaces   1 active",
        "  budget       $0.4200 spent today of a $5.0000 daily cap (8%); "
        "resets 2026-12-02T00:00+00:00",
        "  today        3 questions, 12,345 tokens in / 678 out, $0.0213, 2 workspaces",
        "  transcripts  1 pending, 3 done",
    ]


def test_status_without_a_cap_and_without_usage_says_so() -> None:
    health = {
        **HEALTH,
        "budget": {"daily_usd": None, "spent_today_usd": 0.0, "exhausted": False},
        "usage_today": {**HEALTH["usage_today"], "questions": 1, "workspaces": 1},  # type: ignore[dict-item]
        "transcripts": {"pending": 0},
    }
    with CaptureServer(respond=lambda seen: (200, health)) as server:
        lines = cli(["status", "--server", server.url]).out.splitlines()
    assert "  budget       $0.0000 spent today, no daily cap" in lines
    assert any(line.startswith("  today        1 question, ") for line in lines)
    assert "  transcripts  none queued" in lines


def test_reset_and_empty_print_one_line_against_the_real_server(
    real_server: AppServer, tmp_path: Path
) -> None:
    repo = _git_repo(tmp_path / "repo")
    reset = cli(["reset", "--cwd", str(repo), "--server", real_server.url])
    empty = cli(["empty", "--cwd", str(repo), "--server", real_server.url])
    assert reset.code == empty.code == 0, reset.err + empty.err
    assert reset.out == f"{repo}: reset: memory wiped, preload re-read\n"
    assert empty.out == f"{repo}: emptied: memory wiped\n"
    machine = cli(["reset", "--json", "--cwd", str(repo), "--server", real_server.url])
    assert json.loads(machine.out)["workspace"] == str(repo)


@pytest.mark.parametrize(
    ("argv", "code", "status"),
    [
        (["status"], 3, None),
        (["stats", "--by-day"], 3, None),
        (["ask", "where?"], 3, None),
        (["config", "set", "model=x"], None, None),  # writes the file; only the reload fails
    ],
)
def test_json_failures_print_one_json_object_and_exit_non_zero(
    argv: list[str], code: int | None, status: int | None, tmp_path: Path
) -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    extra = ["--config", str(tmp_path / "c.json")] if argv[0] == "config" else []
    result = cli([*argv, *extra, "--json", "--server", url])
    if code is None:  # config set with the server down: written, exit 0, JSON either way
        assert result.code == 0
        assert json.loads(result.out)["reloaded"] is False
        return
    assert result.code == code
    assert result.err == ""
    error = json.loads(result.out)["error"]
    assert error == {"message": error["message"], "exit_code": code, "status": status}
    assert error["message"].startswith(f"the server is not running at {url}")


def test_json_server_errors_and_usage_errors_have_the_same_shape(
    real_server: AppServer, tmp_path: Path
) -> None:
    rejected = cli(["stats", "--json", "--cwd", str(tmp_path), "--server", real_server.url])
    assert rejected.code == 1
    error = json.loads(rejected.out)["error"]
    assert error["status"] == 404 and error["exit_code"] == 1
    assert str(tmp_path) in error["message"]
    usage = cli(["stats", "--json", "--cwd", "/no/such/dir", "--server", real_server.url])
    assert usage.code == 2
    assert json.loads(usage.out)["error"]["exit_code"] == 2
    human = cli(["stats", "--cwd", "/no/such/dir", "--server", real_server.url])
    assert human.code == 2 and human.out == ""
    assert human.err.startswith("usage: live-memory stats")
    assert "live-memory: argument --cwd: not an existing directory" in human.err
    assert "live-memory: live-memory" not in human.err  # the prefix is said once


def test_the_server_down_message_names_the_prefix_once() -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    result = cli(["status", "--server", url])
    assert result.code == 3
    assert result.err == (
        f"live-memory: the server is not running at {url}; start it with `live-memory serve` "
        "(or keep one running: `live-memory install-service`)\n"
    )


def test_stats_by_day_covers_every_workspace_without_cwd_and_one_with_it(
    real_server: AppServer, tmp_path: Path
) -> None:
    repo = _git_repo(tmp_path / "repo")
    cli(["reset", "--cwd", str(repo), "--server", real_server.url])  # known to the server
    every = cli(["stats", "--by-day", "--server", real_server.url])
    assert every.code == 0, every.err
    assert every.out.splitlines()[0] == "usage by day, all workspaces"
    machine = json.loads(cli(["stats", "--by-day", "--json", "--server", real_server.url]).out)
    assert machine["workspace"] is None and isinstance(machine["by_day"], list)
    one = cli(["stats", "--by-day", "--cwd", str(repo), "--server", real_server.url])
    assert one.code == 0, one.err
    assert one.out.splitlines()[0] == f"usage by day of {repo}"


def test_import_over_the_body_limit_reports_the_413(real_server: AppServer, tmp_path: Path) -> None:
    repo = _git_repo(tmp_path / "repo")
    source = tmp_path / "knowledge"
    # About 9 MiB of facts, over the default 8 MiB body limit.
    facts = [LedgerFact(f"fact {i}: " + "x" * 900, (), "architecture") for i in range(10_000)]
    export_ledger(facts, source, repo_name="repo")
    result = cli(["import", str(source), "--cwd", str(repo), "--server", real_server.url])
    assert result.code == 1, result.err
    assert "(HTTP 413)" in result.err
    assert "body limit" in result.err or "LIVE_MEMORY_MAX_BODY_BYTES" in result.err
    assert "not running" not in result.err and "Broken pipe" not in result.err
    machine = cli(
        ["import", str(source), "--cwd", str(repo), "--json", "--server", real_server.url]
    )
    assert json.loads(machine.out)["error"]["status"] == 413


def test_status_is_all_words_with_the_server_and_the_endpoint_stats_shows(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True, timeout=30)
    env = {
        "ANTHROPIC_API_KEY": "sk-ant-api03-" + "k" * 40,  # never used: nothing is asked
        "ANTHROPIC_BASE_URL": "https://gateway.example/anthropic",
        "LIVE_MEMORY_WATCHER": "os",
    }
    with AppServer(tmp_path / "data", env) as server:
        server.request("POST", "/clear", json={"cwd": str(repo)}).raise_for_status()
        status = cli(["status", "--server", server.url])
        stats = json.loads(cli(["stats", "--json", "--cwd", str(repo), "--server", server.url]).out)
    assert status.code == 0, status.err
    lines = status.out.splitlines()
    assert lines[0] == f"live-memory 0.1.0 at {server.url}: ok"
    assert not [line for line in lines if "{" in line or "[" in line], lines  # no raw JSON
    endpoint = next(line for line in lines if line.startswith("  endpoint "))
    assert stats["endpoint"] == "https://gateway.example/anthropic"
    assert endpoint.split()[1] == "https://gateway.example/anthropic,"
    assert "  snapshots    written normally" in lines
    assert "  data disk    writable" in lines
    assert any(line.startswith("  watcher      ") for line in lines)
    assert f"  data dir     {tmp_path / 'data'}" in lines
