"""The plugin's JSON and markdown files parse, agree with each other, and reach real scripts."""

from __future__ import annotations

import json
import re
from pathlib import Path

from live_memory import __version__
from live_memory.config import constants as C
from tests.plugin.conftest import PLUGIN, REPO

SCRIPT_REF = re.compile(r'"\$\{CLAUDE_PLUGIN_ROOT\}/([^"]+)"')
KEBAB = re.compile(r"^\.?[a-z0-9]+(-[a-z0-9]+)*(\.[a-z0-9]+)*$")


def _json(path: Path) -> dict[str, object]:
    loaded = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def _frontmatter(path: Path) -> dict[str, str]:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n"), path
    head = text[4 : text.index("\n---\n", 4)]
    fields = {}
    for line in head.splitlines():
        key, _, value = line.partition(":")
        fields[key.strip()] = value.strip()
    return fields


def test_manifest_and_marketplace_name_the_same_plugin_and_version() -> None:
    manifest = _json(PLUGIN / ".claude-plugin" / "plugin.json")
    assert manifest["name"] == "live-memory"
    assert manifest["version"] == __version__
    assert manifest["license"] == "MIT"
    assert manifest["description"] and manifest["author"]
    market = _json(REPO / ".claude-plugin" / "marketplace.json")
    (entry,) = market["plugins"]  # type: ignore[misc]
    assert entry["name"] == "live-memory" and entry["source"] == "./plugin"
    assert (REPO / entry["source"] / ".claude-plugin" / "plugin.json").is_file()
    assert market["owner"]["name"]  # type: ignore[index]


def test_mcp_server_is_http_on_the_default_port_with_a_timeout_above_the_soft_deadline() -> None:
    server = _json(PLUGIN / ".mcp.json")["mcpServers"]["live-memory"]  # type: ignore[index]
    assert server["type"] == "http"
    assert server["url"] == f"http://127.0.0.1:${{LIVE_MEMORY_PORT:-{C.DEFAULT_PORT}}}/mcp"
    assert server["alwaysLoad"] is True
    hard_backstop_ms = (C.DEFAULT_TIMEOUT_S + C.HARD_DEADLINE_MARGIN_S) * 1000
    assert server["timeout"] > hard_backstop_ms
    assert server["headers"] == {"Authorization": "Bearer ${LIVE_MEMORY_TOKEN:-}"}


def test_every_hook_runs_an_existing_script_through_the_plugin_root() -> None:
    hooks = _json(PLUGIN / "hooks" / "hooks.json")["hooks"]
    assert isinstance(hooks, dict)
    assert set(hooks) == {"SessionStart", "PostToolUse", "FileChanged", "Stop"}
    (post,) = hooks["PostToolUse"]
    (stop,) = hooks["Stop"]
    assert "matcher" not in stop
    (stop_hook,) = stop["hooks"]
    assert stop_hook["command"].endswith('/scripts/notify.py"')
    assert stop_hook["timeout"] <= 5  # never holds the agent up for long
    assert post["matcher"] == "Read|Write|Edit|MultiEdit|NotebookEdit"
    (changed,) = hooks["FileChanged"]
    # A FileChanged matcher is a list of file names to watch, not a filter: the paths come
    # from SessionStart's watchPaths instead.
    assert "matcher" not in changed
    for groups in hooks.values():
        for group in groups:
            for hook in group["hooks"]:
                assert hook["type"] == "command"
                assert hook["command"].startswith("python3 -I -S ")
                (script,) = SCRIPT_REF.findall(hook["command"])
                assert (PLUGIN / script).is_file(), script
                assert 0 < hook["timeout"] <= 30


def test_slash_commands_run_the_command_script_and_cannot_be_model_invoked() -> None:
    names = {path.stem for path in (PLUGIN / "commands").glob("*.md")}
    assert names == {
        "live-memory-stats",
        "live-memory-reset",
        "live-memory-empty",
        "live-memory-config",
    }
    for path in (PLUGIN / "commands").glob("*.md"):
        meta = _frontmatter(path)
        assert meta["description"]
        assert meta["allowed-tools"] == "Bash(python3:*)"
        assert meta["disable-model-invocation"] == "true"
        action = path.stem.removeprefix("live-memory-")
        body = path.read_text(encoding="utf-8")
        script = '"${CLAUDE_PLUGIN_ROOT}/scripts/live-memory-command.py"'
        assert f"!`python3 -I -S {script} {action}" in body
    assert (PLUGIN / "scripts" / "live-memory-command.py").is_file()


def test_the_skill_says_when_to_ask_and_to_pass_the_absolute_root() -> None:
    skill = PLUGIN / "skills" / "live-memory" / "SKILL.md"
    meta = _frontmatter(skill)
    assert meta["name"] == "live-memory"
    assert "ask_live_memory" in meta["description"]
    text = skill.read_text(encoding="utf-8")
    assert "absolute" in text and "cwd" in text and "not for editing" in meta["description"]


def test_plugin_file_names_are_kebab_case() -> None:
    for path in PLUGIN.rglob("*"):
        if "__pycache__" in path.parts:
            continue
        name = path.name
        if name in {"SKILL.md", "README.md", ".claude-plugin", ".mcp.json"}:
            continue
        assert KEBAB.match(name), path.relative_to(PLUGIN)
