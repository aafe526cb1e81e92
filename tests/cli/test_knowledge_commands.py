"""`live-memory export`, `import` and `stats --by-day`: requests, files, output, exit codes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from live_memory.cli.knowledge_command import fact_to_json
from live_memory.knowledge import export_ledger, import_ledger
from live_memory.memory import LedgerFact
from tests.cli.conftest import cli
from tests.plugin.capture_server import CaptureServer, Seen, closed_port
from tests.support.app_server import AppServer

pytestmark = pytest.mark.e2e

FACTS = [
    LedgerFact("The CLI talks to the server only through cli/client.py", (), "architecture"),
    LedgerFact(
        "Session cookies are signed with the key in src/auth/keys.py\nRotate it with make rotate",
        (("src/auth/keys.py", "3f2a" * 16), ("Makefile", "")),
        "gotcha",
    ),
    LedgerFact("Tests need REDIS_URL set", (("tests/conftest.py", "9b1c" * 16),), "gotcha", True),
    LedgerFact("Use ruff format, line length 100", (), "convention"),
]
CATEGORY_FILES = ["architecture.md", "convention.md", "decision.md", "gotcha.md", "task.md"]
BY_DAY = [
    {
        "day": "2026-11-30",
        "questions": 3,
        "input": 12345,
        "output": 678,
        "cache_read": 100000,
        "cache_write": 2000,
        "cost_usd": 0.0213,
    },
    {
        "day": "2026-11-29",
        "questions": 1,
        "input": 1000,
        "output": 22,
        "cache_read": 0,
        "cache_write": 5000,
        "cost_usd": 0.5,
    },
]


def _export_answer(workspace: Path, repo: str = "myrepo") -> dict[str, object]:
    return {
        "workspace": str(workspace),
        "repo": repo,
        "facts": [fact_to_json(fact) for fact in FACTS],
    }


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "myrepo"
    path.mkdir()
    return path


def test_export_writes_one_markdown_file_a_category_under_the_default_dir(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    with CaptureServer(respond=lambda seen: (200, _export_answer(workspace))) as server:
        result = cli(["export", "--cwd", str(workspace), "--server", server.url])
        (seen,) = server.wait_for(1)
    assert result.code == 0, result.err
    assert (seen.method, seen.path, seen.query) == ("GET", "/api/export", {"cwd": str(workspace)})
    out = here / "live-memory-knowledge" / "myrepo"
    assert sorted(path.name for path in out.iterdir()) == CATEGORY_FILES
    assert result.out.splitlines() == [
        f"exported 4 facts (1 possibly out of date) of {workspace} to {out}",
        *(f"  {name}" for name in CATEGORY_FILES),
    ]
    gotchas = (out / "gotcha.md").read_text(encoding="utf-8")
    assert "- ⚠ possibly out of date: Tests need REDIS_URL set" in gotchas
    assert f"  - source: `src/auth/keys.py` sha256:{'3f2a' * 16}" in gotchas
    assert sorted(import_ledger(out), key=FACTS.index) == FACTS  # the files read back whole


def test_export_json_reports_what_was_written_where(workspace: Path, tmp_path: Path) -> None:
    out = tmp_path / "chosen"
    with CaptureServer(respond=lambda seen: (200, _export_answer(workspace))) as server:
        argv = ["export", "--cwd", str(workspace), "--out", str(out), "--json"]
        result = cli([*argv, "--server", server.url])
    assert result.code == 0, result.err
    assert json.loads(result.out) == {
        "workspace": str(workspace),
        "repo": "myrepo",
        "out_dir": str(out),
        "facts": 4,
        "stale": 1,
        "files": [str(out / name) for name in CATEGORY_FILES],
    }
    assert sorted(import_ledger(out), key=FACTS.index) == FACTS


def test_export_of_an_unknown_workspace_exits_1_with_the_servers_message(
    workspace: Path, tmp_path: Path
) -> None:
    def respond(seen: Seen) -> tuple[int, object]:
        return 404, {"error": f"no memory for workspace {workspace}"}

    with CaptureServer(respond=respond) as server:
        argv = ["export", "--cwd", str(workspace), "--out", str(tmp_path / "out")]
        result = cli([*argv, "--server", server.url])
    assert result.code == 1
    assert result.err == f"live-memory: no memory for workspace {workspace} (HTTP 404)\n"
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ({"repo": "../evil", "facts": []}, "unusable repo name '../evil'"),
        ({"repo": "r", "facts": {"text": "x"}}, "without a facts list"),
        ({"repo": "r", "facts": [{"category": "gotcha"}]}, "malformed facts[0]: it needs a text"),
        ({"repo": "r", "facts": [{"text": "t", "sources": [["p"]]}]}, "[path, sha256] pairs"),
        ({"repo": "r", "facts": [{"text": "t", "stale": "yes"}]}, "stale a boolean"),
        (["not", "an", "object"], "not a JSON object"),
    ],
)
def test_a_malformed_export_answer_exits_1_and_writes_nothing(
    workspace: Path, tmp_path: Path, answer: object, message: str
) -> None:
    with CaptureServer(respond=lambda seen: (200, answer)) as server:
        argv = ["export", "--cwd", str(workspace), "--out", str(tmp_path / "out")]
        result = cli([*argv, "--server", server.url])
    assert result.code == 1
    assert message in result.err
    assert not (tmp_path / "out").exists()


def test_import_reads_a_directory_and_posts_its_facts(workspace: Path, tmp_path: Path) -> None:
    source = tmp_path / "knowledge"
    export_ledger(FACTS, source, repo_name="myrepo")

    def respond(seen: Seen) -> tuple[int, object]:
        return 200, {"added": 3, "ledger_facts": 41}

    with CaptureServer(respond=respond) as server:
        human = cli(["import", str(source), "--cwd", str(workspace), "--server", server.url])
        machine = cli(
            ["import", str(source), "--cwd", str(workspace), "--json", "--server", server.url]
        )
        first, _ = server.wait_for(2)
    assert (first.method, first.path) == ("POST", "/api/import")
    body = first.json()
    assert isinstance(body, dict) and body["cwd"] == str(workspace)
    assert sorted(body["facts"], key=lambda f: f["text"]) == sorted(
        (fact_to_json(fact) for fact in FACTS), key=lambda f: str(f["text"])
    )
    assert human.code == machine.code == 0
    assert human.out.splitlines() == [
        f"imported 3 of 4 facts read from {source} into {workspace} (1 already known)",
        "its ledger now holds 41 facts",
    ]
    assert json.loads(machine.out) == {
        "source": str(source),
        "read": 4,
        "added": 3,
        "ledger_facts": 41,
    }


def test_import_of_one_hand_written_file_takes_its_category_from_the_name(
    workspace: Path, tmp_path: Path
) -> None:
    note = tmp_path / "decision.md"
    note.write_text("# Decisions\n\n- We ship wheels only\n  - source: `setup.cfg`\n")
    with CaptureServer(respond=lambda seen: (200, {"added": 1, "ledger_facts": 1})) as server:
        result = cli(["import", str(note), "--cwd", str(workspace), "--server", server.url])
        (seen,) = server.wait_for(1)
    assert result.code == 0, result.err
    assert seen.json() == {
        "cwd": str(workspace),
        "facts": [
            {
                "text": "We ship wheels only",
                "category": "decision",
                "stale": False,
                "sources": [["setup.cfg", ""]],
            }
        ],
    }
    assert result.out.splitlines()[-1] == "its ledger now holds 1 fact"


def test_import_of_a_directory_without_markdown_exits_1_and_sends_nothing(
    workspace: Path, tmp_path: Path
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    with CaptureServer() as server:
        result = cli(["import", str(empty), "--cwd", str(workspace), "--server", server.url])
    assert result.code == 1
    assert result.err == f"live-memory: no markdown (*.md) files in {empty}\n"
    assert server.requests == []


def test_import_of_a_missing_path_is_a_usage_error(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    result = cli(["import", str(tmp_path / "nope"), "--server", url])
    assert result.code == 2
    assert "no such file or directory" in result.err


def test_export_and_import_with_no_server_exit_3(workspace: Path, tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    source = tmp_path / "knowledge"
    export_ledger(FACTS, source, repo_name="myrepo")
    exported = cli(
        ["export", "--cwd", str(workspace), "--out", str(tmp_path / "o"), "--server", url]
    )
    imported = cli(["import", str(source), "--cwd", str(workspace), "--server", url])
    assert exported.code == imported.code == 3
    assert "not running at" in exported.err and "not running at" in imported.err


def test_stats_by_day_renders_a_table_of_days_and_a_total(workspace: Path) -> None:
    stats = {"workspace": str(workspace), "questions_answered": 4, "by_day": BY_DAY}
    with CaptureServer(respond=lambda seen: (200, stats)) as server:
        human = cli(["stats", "--by-day", "--cwd", str(workspace), "--server", server.url])
        machine = cli(
            ["stats", "--by-day", "--json", "--cwd", str(workspace), "--server", server.url]
        )
        first, second = server.wait_for(2)
    assert first.query == second.query == {"cwd": str(workspace), "by_day": "1"}
    assert human.code == machine.code == 0
    assert human.out.splitlines() == [
        f"usage by day of {workspace}",
        "DAY         QUESTIONS  INPUT   OUTPUT  CACHE READ  CACHE WRITE  COST",
        "2026-11-30  3          12,345  678     100,000     2,000        $0.0213",
        "2026-11-29  1          1,000   22      0           5,000        $0.5000",
        "TOTAL       4          13,345  700     100,000     7,000        $0.5213",
    ]
    assert json.loads(machine.out) == stats


def test_stats_by_day_with_no_usage_yet_says_so(workspace: Path) -> None:
    stats = {"workspace": str(workspace), "by_day": []}
    with CaptureServer(respond=lambda seen: (200, stats)) as server:
        result = cli(["stats", "--by-day", "--cwd", str(workspace), "--server", server.url])
    assert result.out.splitlines() == [f"usage by day of {workspace}", "no usage recorded yet"]


def test_stats_by_day_from_a_server_without_it_exits_1(workspace: Path) -> None:
    with CaptureServer(respond=lambda seen: (200, {"workspace": str(workspace)})) as server:
        result = cli(["stats", "--by-day", "--cwd", str(workspace), "--server", server.url])
    assert result.code == 1
    assert "without a by_day list" in result.err


def test_import_then_export_round_trips_through_the_real_server(
    real_server: AppServer, tmp_path: Path
) -> None:
    """Needs the server's /api/import, /api/export and /stats?by_day=1 (issue 9)."""
    workspace = tmp_path / "repo"
    workspace.mkdir()
    subprocess.run(["git", "init", "-q", str(workspace)], check=True, timeout=30)
    source = tmp_path / "knowledge"
    export_ledger(FACTS, source, repo_name="repo")
    url = real_server.url

    imported = cli(["import", str(source), "--cwd", str(workspace), "--json", "--server", url])
    assert imported.code == 0, imported.err
    assert json.loads(imported.out)["added"] == len(FACTS)
    again = cli(["import", str(source), "--cwd", str(workspace), "--json", "--server", url])
    assert json.loads(again.out)["added"] == 0  # merged without duplicates

    out = tmp_path / "exported"
    exported = cli(["export", "--cwd", str(workspace), "--out", str(out), "--server", url])
    assert exported.code == 0, exported.err
    assert sorted(import_ledger(out), key=lambda fact: fact.text) == sorted(
        FACTS, key=lambda fact: fact.text
    )

    by_day = cli(["stats", "--by-day", "--json", "--cwd", str(workspace), "--server", url])
    assert by_day.code == 0, by_day.err
    assert isinstance(json.loads(by_day.out)["by_day"], list)
    unknown = tmp_path / "never-seen"
    unknown.mkdir()
    missing = cli(["export", "--cwd", str(unknown), "--out", str(tmp_path / "x"), "--server", url])
    assert missing.code == 1
    assert missing.err.endswith("(HTTP 404)\n")


def _git_workspace(path: Path) -> Path:
    path.mkdir()
    subprocess.run(["git", "init", "-q", str(path)], check=True, timeout=30)
    return path


def test_import_takes_a_hand_written_source_line_as_the_facts_source(
    real_server: AppServer, tmp_path: Path
) -> None:
    workspace = _git_workspace(tmp_path / "hand")
    notes = tmp_path / "notes.md"
    notes.write_text(
        "- Requests are routed in app/router.py\n  source: app/router.py\n", encoding="utf-8"
    )
    url = real_server.url
    imported = cli(["import", str(notes), "--cwd", str(workspace), "--server", url])
    assert imported.code == 0, imported.err
    reply = real_server.request("GET", "/api/export", params={"cwd": str(workspace)}).json()
    assert [(f["text"], f["sources"]) for f in reply["facts"]] == [
        ("Requests are routed in app/router.py", [["app/router.py", ""]])
    ]


def test_importing_a_known_fact_again_says_it_was_already_known(
    real_server: AppServer, tmp_path: Path
) -> None:
    workspace = _git_workspace(tmp_path / "again")
    notes = tmp_path / "gotcha.md"
    notes.write_text("- Tests need REDIS_URL set\n", encoding="utf-8")
    argv = ["import", str(notes), "--cwd", str(workspace), "--server", real_server.url]
    first = cli(argv)
    assert first.code == 0, first.err
    assert first.out.startswith(f"imported 1 of 1 fact read from {notes} into {workspace}\n")
    again = cli(argv)
    assert again.code == 0, again.err
    assert again.out.startswith(
        f"imported 0 of 1 fact read from {notes} into {workspace} (1 already known)\n"
    )


def test_importing_a_file_without_facts_is_an_error_and_sends_nothing(
    real_server: AppServer, tmp_path: Path
) -> None:
    workspace = _git_workspace(tmp_path / "none")
    notes = tmp_path / "empty.md"
    notes.write_text("# Notes\n\nNothing here but prose.\n", encoding="utf-8")
    argv = ["import", str(notes), "--cwd", str(workspace), "--server", real_server.url]
    result = cli(argv)
    assert result.code == 1 and result.out == ""
    assert result.err.startswith(f"live-memory: no facts found in {notes}: a fact is a line")
    as_json = cli([*argv, "--json"])
    assert as_json.code == 1
    assert json.loads(as_json.out)["error"]["message"].startswith("no facts found")
    # Nothing was sent: the workspace was never created.
    assert real_server.request("GET", "/stats", params={"cwd": str(workspace)}).status_code == 404


def test_exporting_an_empty_ledger_writes_nothing_and_says_so(
    real_server: AppServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = _git_workspace(tmp_path / "blank")
    url = real_server.url
    assert real_server.request("POST", "/clear", json={"cwd": str(workspace)}).status_code == 200
    monkeypatch.chdir(workspace)  # the default output directory is under the current one
    result = cli(["export", "--cwd", str(workspace), "--server", url])
    assert result.code == 0, result.err
    assert result.out == f"the memory of {workspace} holds no facts yet: nothing exported\n"
    assert sorted(p.name for p in workspace.iterdir()) == [".git"]
    as_json = json.loads(cli(["export", "--cwd", str(workspace), "--json", "--server", url]).out)
    assert as_json["facts"] == 0 and as_json["files"] == []
