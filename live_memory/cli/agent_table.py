"""What `live-memory connect` writes for each coding agent, as data (docs/AGENTS.md).

Every agent gets the MCP server in its own configuration file; agents with hooks get them
pointed at the shared hook client (plugin/scripts, copied into the user's data dir); every
agent gets its instructions in the file it reads them from. The formats were taken from each
agent's documentation (and, for Gemini CLI, Codex and OpenCode, checked against the pinned
CLIs of tests/e2e). Paths starting with `~/` are under the user's home (user scope); the
others are under the repository root (`--project`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "AGENTS",
    "INSTRUCTIONS",
    "SERVER_NAME",
    "AgentSpec",
    "HookSpec",
    "Target",
]

SERVER_NAME = "live-memory"
Format = Literal["json", "toml", "block", "file"]


@dataclass(frozen=True, slots=True)
class Target:
    """One file `connect` edits: its format, where it lives per scope (None: the agent has
    no such file at that scope), and where our entry sits in it (json/toml)."""

    format: Format
    user: str | None
    project: str | None
    key: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class HookSpec:
    """The agent's hooks file. `events`: hook event -> (script, matcher or None); `grouped`:
    Claude Code's `{matcher, hooks: [...]}` groups (else Cursor's flat `{command}` entries);
    `timeout`: the per-hook timeout in the agent's unit; `top`: fields the file must have."""

    target: Target
    events: dict[str, tuple[str, str | None]]
    grouped: bool = True
    timeout: int = 5
    top: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class AgentSpec:
    title: str
    mcp: Target
    mcp_entry: dict[str, object]
    """The server's entry; `{url}` and `{token}` in its strings are filled in."""
    token_header: str | None
    """How the entry names the token: an env reference the agent expands (None: the entry's
    own field does, as Codex's bearer_token_env_var)."""
    rules: Target
    hooks: HookSpec | None = None
    plugin: Target | None = None
    """A file of ours the agent loads (OpenCode's plugin), written whole."""
    reads_seen: bool = True
    """False where hooks miss reads or edits: `connect` turns on the server's OS watcher."""


_NOTIFY, _START = "notify.py", "session-start.py"
_CLAUDE_TOOLS = "Read|Write|Edit|MultiEdit|NotebookEdit"

AGENTS: dict[str, AgentSpec] = {
    "claude-code": AgentSpec(
        "Claude Code",
        Target("json", "~/.claude.json", ".mcp.json", ("mcpServers", SERVER_NAME)),
        {"type": "http", "url": "{url}", "timeout": 120000},
        "${LIVE_MEMORY_TOKEN}",
        Target("block", "~/.claude/CLAUDE.md", "CLAUDE.md"),
        HookSpec(
            Target("json", "~/.claude/settings.json", ".claude/settings.json", ("hooks",)),
            {
                "SessionStart": (_START, None),
                "PostToolUse": (_NOTIFY, _CLAUDE_TOOLS),
                "FileChanged": (_NOTIFY, None),
                "Stop": (_NOTIFY, None),
            },
        ),
    ),
    "gemini": AgentSpec(
        "Gemini CLI",
        Target(
            "json", "~/.gemini/settings.json", ".gemini/settings.json", ("mcpServers", SERVER_NAME)
        ),
        # trust: the tool is read-only; without it a headless run refuses the call.
        {"httpUrl": "{url}", "timeout": 120000, "trust": True},
        "${LIVE_MEMORY_TOKEN}",
        Target("block", "~/.gemini/GEMINI.md", "GEMINI.md"),
        HookSpec(
            Target("json", "~/.gemini/settings.json", ".gemini/settings.json", ("hooks",)),
            {
                "SessionStart": (_START, None),
                "AfterTool": (_NOTIFY, "read_file|write_file|replace"),
            },
            timeout=5000,  # milliseconds
        ),
    ),
    "codex": AgentSpec(
        "Codex",
        Target("toml", "~/.codex/config.toml", ".codex/config.toml", ("mcp_servers", SERVER_NAME)),
        {"url": "{url}", "tool_timeout_sec": 120},
        None,
        Target("block", "~/.codex/AGENTS.md", "AGENTS.md"),
        # It reads through its shell: PostToolUse on Bash tees the files a command names;
        # its edits (apply_patch) reach no hook, so the OS watcher is turned on for them.
        HookSpec(
            Target("json", "~/.codex/hooks.json", ".codex/hooks.json", ("hooks",)),
            {"SessionStart": (_START, None), "PostToolUse": (_NOTIFY, "Bash")},
        ),
        reads_seen=False,
    ),
    "cursor": AgentSpec(
        "Cursor",
        Target("json", "~/.cursor/mcp.json", ".cursor/mcp.json", ("mcpServers", SERVER_NAME)),
        {"url": "{url}"},
        "${env:LIVE_MEMORY_TOKEN}",
        Target("file", None, ".cursor/rules/live-memory.mdc"),
        HookSpec(
            Target("json", "~/.cursor/hooks.json", ".cursor/hooks.json", ("hooks",)),
            {
                "sessionStart": (_START, None),
                "beforeReadFile": (_NOTIFY, None),
                "afterFileEdit": (_NOTIFY, None),
            },
            grouped=False,
            top={"version": 1},
        ),
    ),
    "opencode": AgentSpec(
        "OpenCode",
        Target("json", "~/.config/opencode/opencode.json", "opencode.json", ("mcp", SERVER_NAME)),
        {"type": "remote", "url": "{url}", "enabled": True},
        "{env:LIVE_MEMORY_TOKEN}",
        Target("block", "~/.config/opencode/AGENTS.md", "AGENTS.md"),
        plugin=Target(
            "file", "~/.config/opencode/plugins/live-memory.js", ".opencode/plugins/live-memory.js"
        ),
    ),
    "vscode": AgentSpec(
        "VS Code (GitHub Copilot)",
        Target(
            "json", "~/.config/Code/User/mcp.json", ".vscode/mcp.json", ("servers", SERVER_NAME)
        ),
        {"type": "http", "url": "{url}"},
        "${env:LIVE_MEMORY_TOKEN}",
        Target("block", None, ".github/copilot-instructions.md"),
        reads_seen=False,  # MCP only: Copilot has no hooks
    ),
}

INSTRUCTIONS = """\
## live-memory

A `live-memory` MCP server is connected: its `ask_live_memory(question, cwd)` tool answers
broad questions about this codebase (where is X, how does Y work, what calls Z) from what it
has already read, far cheaper than reading many files yourself. Call it before exploring
widely, and pass the absolute path of the repository root as `cwd`. Its answers cite files;
read those yourself before you edit them.
"""
"""The agents' instructions: one text for all, placed where each reads its rules."""
