"""`live-memory connect AGENT` / `disconnect AGENT` / `connect --list` on real files in a
temporary home and repository: the documented formats, merging with what is there, a second
run that changes nothing, a byte-for-byte undo, and the refusal of a malformed file."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

import pytest

from live_memory.cli.agent_table import AGENTS
from live_memory.cli.config_files import BLOCK_BEGIN, BLOCK_END
from tests.cli.conftest import Outcome, cli
from tests.support.server_process import free_port

ALL = sorted(AGENTS)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    # A port nobody listens on: the watcher step writes config.json and finds no server.
    return {
        "HOME": str(home),
        "LIVE_MEMORY_DATA_DIR": str(tmp_path / "data"),
        "LIVE_MEMORY_PORT": str(free_port()),
    }


def _home(env: dict[str, str]) -> Path:
    return Path(env["HOME"])


def _ok(argv: list[str], env: dict[str, str]) -> Outcome:
    done = cli(argv, env)
    assert done.code == 0, (done.out, done.err)
    return done


def _snapshot(root: Path) -> dict[str, bytes]:
    """Every file under `root` except live-memory's own data dir, with its bytes."""
    skip = root / ".local" / "share" / "live-memory"
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and skip not in p.parents
    }


def _json(path: Path) -> dict[str, object]:
    data = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def test_connect_writes_each_agents_documented_user_files(env: dict[str, str]) -> None:
    for agent in ALL:
        _ok(["connect", agent], env)
    home = _home(env)
    port = env["LIVE_MEMORY_PORT"]
    url = f"http://127.0.0.1:{port}/mcp"
    hooks = home / ".local/share/live-memory/hooks"
    assert _json(home / ".claude.json")["mcpServers"] == {
        "live-memory": {"type": "http", "url": url, "timeout": 120000}
    }
    claude_hooks = _json(home / ".claude/settings.json")["hooks"]
    assert isinstance(claude_hooks, dict)
    assert set(claude_hooks) == {"SessionStart", "PostToolUse", "FileChanged", "Stop"}
    gemini = _json(home / ".gemini/settings.json")
    assert gemini["mcpServers"] == {
        "live-memory": {"httpUrl": url, "timeout": 120000, "trust": True}
    }
    after_tool = gemini["hooks"]["AfterTool"][0]  # type: ignore[index]
    assert after_tool["matcher"] == "read_file|write_file|replace"
    assert after_tool["hooks"][0]["command"] == (
        f"env LIVE_MEMORY_PORT={port} python3 -I -S {hooks}/notify.py gemini"
    )
    codex = tomllib.loads((home / ".codex/config.toml").read_text())
    assert codex["mcp_servers"]["live-memory"] == {"url": url, "tool_timeout_sec": 120}
    assert codex["features"] == {"hooks": True}
    codex_hooks = _json(home / ".codex/hooks.json")["hooks"]
    assert set(codex_hooks) == {"SessionStart", "PostToolUse"}  # type: ignore[arg-type]
    assert codex_hooks["PostToolUse"][0]["matcher"] == "Bash"  # type: ignore[index]
    cursor_hooks = _json(home / ".cursor/hooks.json")
    assert cursor_hooks["version"] == 1
    assert set(cursor_hooks["hooks"]) == {"sessionStart", "beforeReadFile", "afterFileEdit"}  # type: ignore[arg-type]
    assert _json(home / ".cursor/mcp.json")["mcpServers"] == {"live-memory": {"url": url}}
    opencode = _json(home / ".config/opencode/opencode.json")
    assert opencode["mcp"] == {"live-memory": {"type": "remote", "url": url, "enabled": True}}
    plugin = (home / ".config/opencode/plugins/live-memory.js").read_text()
    assert f'const HOOKS = "{hooks}"' in plugin and f'"LIVE_MEMORY_PORT": "{port}"' in plugin
    assert _json(home / ".config/Code/User/mcp.json")["servers"] == {
        "live-memory": {"type": "http", "url": url}
    }
    for rules in (".claude/CLAUDE.md", ".gemini/GEMINI.md", ".codex/AGENTS.md"):
        text = (home / rules).read_text()
        assert text.startswith(BLOCK_BEGIN) and "ask_live_memory" in text and BLOCK_END in text
    assert sorted(p.name for p in hooks.iterdir()) == [
        "notify.py",
        "opencode-plugin.js",
        "server-identity.py",
        "session-start.py",
    ]


def test_connect_project_writes_the_repositorys_files(env: dict[str, str], tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    for agent in ALL:
        _ok(["connect", agent, "--project", str(repo)], env)
    names = sorted(str(p.relative_to(repo)) for p in repo.rglob("*") if p.is_file())
    assert names == [
        ".claude/settings.json",
        ".codex/config.toml",
        ".codex/hooks.json",
        ".cursor/hooks.json",
        ".cursor/mcp.json",
        ".cursor/rules/live-memory.mdc",
        ".gemini/settings.json",
        ".github/copilot-instructions.md",
        ".mcp.json",
        ".opencode/plugins/live-memory.js",
        ".vscode/mcp.json",
        "AGENTS.md",
        "CLAUDE.md",
        "GEMINI.md",
        "opencode.json",
    ]
    assert (repo / ".cursor/rules/live-memory.mdc").read_text().startswith("---\n")
    # AGENTS.md is read by both Codex and OpenCode: one block, not two.
    assert (repo / "AGENTS.md").read_text().count(BLOCK_BEGIN) == 1


def test_connect_run_twice_changes_nothing_the_second_time(env: dict[str, str]) -> None:
    for agent in ALL:
        _ok(["connect", agent], env)
    before = _snapshot(_home(env))
    stamps = {p: os.stat(_home(env) / p).st_mtime_ns for p in before}
    for agent in ALL:
        again = _ok(["connect", agent], env)
        assert "changed nothing: already connected" in again.out, again.out
    assert _snapshot(_home(env)) == before
    assert {p: os.stat(_home(env) / p).st_mtime_ns for p in before} == stamps


USERS_FILES = {
    ".claude.json": (
        '{"numStartups": 7, "mcpServers": {"other": {"type": "stdio", "command": "x"}}}'
    ),
    ".claude/settings.json": json.dumps(
        {
            "model": "opus",
            "hooks": {
                "PostToolUse": [
                    {"matcher": "Bash", "hooks": [{"type": "command", "command": "lint.sh"}]}
                ]
            },
        },
        indent=4,
    ),
    ".claude/CLAUDE.md": "# My rules\n\nBe terse.",
    ".gemini/settings.json": '{"theme": "dark", "mcpServers": {"other": {"command": "y"}}}\n',
    ".codex/config.toml": (
        '# my codex settings\nmodel = "o4"  # the default\n\n'
        '[mcp_servers.other]\ncommand = "z"\n\n[features]\nother_flag = true\n'
    ),
    ".cursor/hooks.json": '{"version": 1, "hooks": {"afterFileEdit": [{"command": "fmt.sh"}]}}',
    ".config/opencode/opencode.json": '{"$schema": "https://opencode.ai/config.json"}',
    ".config/Code/User/mcp.json": '{"servers": {"other": {"type": "stdio", "command": "w"}}}',
}


def _write_users_files(home: Path) -> None:
    for name, text in USERS_FILES.items():
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text(text, encoding="utf-8")


def test_connect_keeps_the_users_other_servers_hooks_and_settings(env: dict[str, str]) -> None:
    home = _home(env)
    _write_users_files(home)
    for agent in ALL:
        _ok(["connect", agent], env)
    claude = _json(home / ".claude.json")
    assert claude["numStartups"] == 7
    assert set(claude["mcpServers"]) == {"other", "live-memory"}  # type: ignore[arg-type]
    settings = _json(home / ".claude/settings.json")
    assert settings["model"] == "opus"
    post = settings["hooks"]["PostToolUse"]  # type: ignore[index]
    assert post[0] == {"matcher": "Bash", "hooks": [{"type": "command", "command": "lint.sh"}]}
    assert len(post) == 2
    assert (home / ".claude/CLAUDE.md").read_text().startswith("# My rules\n\nBe terse.\n\n")
    codex = (home / ".codex/config.toml").read_text()
    assert codex.startswith('# my codex settings\nmodel = "o4"  # the default\n')
    parsed = tomllib.loads(codex)
    assert parsed["features"] == {"other_flag": True, "hooks": True}
    assert set(parsed["mcp_servers"]) == {"other", "live-memory"}
    cursor = _json(home / ".cursor/hooks.json")["hooks"]
    assert cursor["afterFileEdit"][0] == {"command": "fmt.sh"}  # type: ignore[index]


def test_disconnect_restores_the_files_byte_for_byte(env: dict[str, str]) -> None:
    home = _home(env)
    _write_users_files(home)
    before = _snapshot(home)
    for agent in ALL:
        _ok(["connect", agent], env)
    assert _snapshot(home) != before
    for agent in ALL:
        done = _ok(["disconnect", agent], env)
        assert "as they were before connect" in done.out, done.out
    assert _snapshot(home) == before
    backups = home / ".local/share/live-memory/backups"
    assert not [p for p in backups.rglob("*") if p.is_file()]


def test_disconnect_after_a_users_edit_removes_only_our_entries(env: dict[str, str]) -> None:
    home = _home(env)
    _write_users_files(home)
    _ok(["connect", "gemini"], env)
    settings = _json(home / ".gemini/settings.json")
    settings["theme"] = "light"  # the user changes the file while connected
    (home / ".gemini/settings.json").write_text(json.dumps(settings))
    done = _ok(["disconnect", "gemini"], env)
    assert "changed since connect" in done.out, done.out
    assert _json(home / ".gemini/settings.json") == {
        "theme": "light",
        "mcpServers": {"other": {"command": "y"}},
    }
    assert not (home / ".gemini/GEMINI.md").exists()  # connect created it: nothing else in it


@pytest.mark.parametrize(
    ("agent", "name", "text"),
    [
        ("gemini", ".gemini/settings.json", '{"theme": "dark",}'),
        ("claude-code", ".claude.json", "[1, 2]"),
        ("cursor", ".cursor/mcp.json", '{"mcpServers": []}'),
        ("vscode", ".config/Code/User/mcp.json", '// my servers\n{"servers": {}}'),
        ("codex", ".codex/config.toml", "[mcp_servers\nurl = 1\n"),
        ("codex", ".codex/config.toml", "a = 1\na = 2\n"),
    ],
)
def test_a_malformed_configuration_is_refused_and_left_untouched(
    env: dict[str, str], agent: str, name: str, text: str
) -> None:
    home = _home(env)
    (home / name).parent.mkdir(parents=True, exist_ok=True)
    (home / name).write_text(text)
    before = _snapshot(home)
    done = cli(["connect", agent], env)
    assert done.code == 2, (done.out, done.err)
    assert f"{home / name} is not valid" in done.err and "left untouched" in done.err
    assert _snapshot(home) == before  # nothing else was written either


def test_the_token_is_referenced_never_written(env: dict[str, str]) -> None:
    env = {**env, "LIVE_MEMORY_TOKEN": "tok-secret-123"}
    for agent in ALL:
        done = _ok(["connect", agent], env)
        assert "LIVE_MEMORY_TOKEN" in done.out
    home = _home(env)
    assert "tok-secret-123" not in json.dumps({k: v.decode() for k, v in _snapshot(home).items()})
    headers = _json(home / ".gemini/settings.json")["mcpServers"]["live-memory"]["headers"]  # type: ignore[index]
    assert headers == {"Authorization": "Bearer ${LIVE_MEMORY_TOKEN}"}
    cursor = _json(home / ".cursor/mcp.json")["mcpServers"]["live-memory"]["headers"]  # type: ignore[index]
    assert cursor == {"Authorization": "Bearer ${env:LIVE_MEMORY_TOKEN}"}
    codex = tomllib.loads((home / ".codex/config.toml").read_text())
    assert codex["mcp_servers"]["live-memory"]["bearer_token_env_var"] == "LIVE_MEMORY_TOKEN"


def test_claude_code_http_hooks_are_posted_by_claude_code_itself(env: dict[str, str]) -> None:
    _ok(["connect", "claude-code", "--http-hooks"], env)
    post = _json(_home(env) / ".claude/settings.json")["hooks"]["PostToolUse"]  # type: ignore[index]
    port = env["LIVE_MEMORY_PORT"]
    assert post == [
        {
            "matcher": "Read|Write|Edit|MultiEdit|NotebookEdit",
            "hooks": [{"type": "http", "url": f"http://127.0.0.1:{port}/notify", "timeout": 5}],
        }
    ]
    _ok(["connect", "claude-code"], env)  # back to the command hook: the http one is replaced
    post = _json(_home(env) / ".claude/settings.json")["hooks"]["PostToolUse"]  # type: ignore[index]
    assert [h["type"] for group in post for h in group["hooks"]] == ["command"]


def test_an_agent_without_read_hooks_turns_the_os_watcher_on(
    env: dict[str, str], tmp_path: Path
) -> None:
    done = _ok(["connect", "codex"], env)
    assert "turned on the server's OS watcher" in done.out, done.out
    assert _json(tmp_path / "data" / "config.json")["watcher"] == "os"
    again = _ok(["connect", "vscode"], env)
    assert "the server's OS watcher is on" in again.out, again.out


def test_connect_list_shows_what_is_connected_where_and_when_hooks_fired(
    env: dict[str, str], tmp_path: Path
) -> None:
    assert "no agent is connected" in _ok(["connect", "--list"], env).out
    repo = tmp_path / "repo"
    repo.mkdir()
    _ok(["connect", "gemini"], env)
    _ok(["connect", "vscode", "--project", str(repo)], env)
    listed = _ok(["connect", "--list"], env).out
    assert "gemini (user): hooks never fired yet" in listed
    assert f"vscode (project:{repo}): no hooks (MCP only)" in listed
    assert str(_home(env) / ".gemini/settings.json") in listed
    fired = _home(env) / ".local/share/live-memory/fired/gemini"
    fired.parent.mkdir(parents=True)
    fired.touch()
    rows = json.loads(_ok(["connect", "--list", "--json"], env).out)["connections"]
    gemini = next(row for row in rows if row["agent"] == "gemini")
    assert gemini["hooks_fired_recently"] is True
    _ok(["disconnect", "gemini"], env)
    assert "gemini" not in _ok(["connect", "--list"], env).out


def test_connect_without_an_agent_or_with_an_unknown_one_is_a_usage_error(
    env: dict[str, str],
) -> None:
    assert cli(["connect"], env).code == 2
    unknown = cli(["connect", "emacs"], env)
    assert unknown.code == 2 and "invalid choice" in unknown.err


def test_a_rules_file_two_agents_read_stays_until_the_last_one_disconnects(
    env: dict[str, str], tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "AGENTS.md").write_text("# Team rules\n")
    _ok(["connect", "codex", "--project", str(repo)], env)
    _ok(["connect", "opencode", "--project", str(repo)], env)
    _ok(["disconnect", "codex", "--project", str(repo)], env)
    assert BLOCK_BEGIN in (repo / "AGENTS.md").read_text()  # OpenCode still reads it
    _ok(["disconnect", "opencode", "--project", str(repo)], env)
    assert (repo / "AGENTS.md").read_text() == "# Team rules\n"
    assert sorted(str(p.relative_to(repo)) for p in repo.rglob("*") if p.is_file()) == ["AGENTS.md"]
