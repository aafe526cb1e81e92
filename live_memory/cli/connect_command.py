"""`live-memory connect AGENT`, `disconnect AGENT` and `connect --list` (docs/AGENTS.md).

`connect` writes the agent's own configuration files (agent_table.py says which and how) for
the user (default) or one repository (`--project`): every file is read and edited in memory
first, so a malformed one refuses the whole command before anything is written. Each file
changed gets a backup of what it was, once per connection, under the data dir; the record of
what was written (connections.json) lets `disconnect` put a file back byte for byte when
nothing else changed it since, and otherwise remove only our entries.

The hook scripts (plugin/scripts: the shared, standard-library hook client) are copied into
`<data dir>/hooks/` so that the agents' configurations name a path that outlives the
checkout or virtualenv they came from; a wheel carries them as data files
(share/live-memory/hooks, pyproject.toml), a checkout has them in plugin/scripts.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import sysconfig
import time
from collections.abc import Mapping
from dataclasses import dataclass
from io import StringIO
from pathlib import Path
from typing import Any, TextIO

from live_memory.atomic_file import write_atomically
from live_memory.cli.agent_table import AGENTS, INSTRUCTIONS, AgentSpec, HookSpec, Target
from live_memory.cli.client import ServerClient, default_server_url
from live_memory.cli.config_command import config_set
from live_memory.cli.config_files import edit_block, edit_hooks, edit_json, edit_toml
from live_memory.cli.outcome import CommandFailed, ExitCode
from live_memory.cli.render import render_json
from live_memory.config import load_settings
from live_memory.errors import ConfigError

__all__ = ["connect", "disconnect", "list_connections"]

HOOK_SCRIPTS = ("notify.py", "session-start.py", "server-identity.py", "opencode-plugin.js")
STATE_FILE = "connections.json"
RECENT_S = 24 * 3600  # "fired recently" in --list
_MDC_HEADER = "---\ndescription: live-memory, the codebase memory\nalwaysApply: true\n---\n\n"


@dataclass(frozen=True, slots=True)
class Place:
    """Where a connection writes: the user's home, or a repository (`root`)."""

    home: Path
    root: Path | None

    @property
    def scope(self) -> str:
        return f"project:{self.root}" if self.root else "user"

    def path(self, target: Target) -> Path | None:
        relative = target.project if self.root else target.user
        if relative is None:
            return None
        if self.root is not None:
            return self.root / relative
        return self.home / relative.removeprefix("~/")


def data_root(environ: Mapping[str, str]) -> Path:
    """= the hook scripts' own default (notify.py's Spool.default without CLAUDE_PLUGIN_DATA)."""
    return Path(environ.get("HOME") or Path.home()) / ".local" / "share" / "live-memory"


def _script_source() -> Path:
    checkout = Path(__file__).resolve().parents[2] / "plugin" / "scripts"
    if (checkout / "notify.py").is_file():
        return checkout
    installed = Path(sysconfig.get_path("data")) / "share" / "live-memory" / "hooks"
    if (installed / "notify.py").is_file():
        return installed
    raise CommandFailed(f"the hook scripts are missing (looked in {checkout} and {installed})")


def _install_scripts(hooks_dir: Path) -> None:
    source = _script_source()
    for name in HOOK_SCRIPTS:
        data = (source / name).read_bytes()
        target = hooks_dir / name
        if not target.is_file() or target.read_bytes() != data:
            write_atomically(target, data, sync=False)
            target.chmod(0o644)


def _server_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The address settings this shell has, baked into hook commands (agents run hooks with
    their own environment, which may lack them)."""
    names = ("LIVE_MEMORY_HOST", "LIVE_MEMORY_PORT")
    return {name: environ[name].strip() for name in names if environ.get(name, "").strip()}


def _command(hooks_dir: Path, script: str, agent: str, env: Mapping[str, str]) -> str:
    prefix = "env " + " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items()) + " " if env else ""
    path = shlex.quote(str(hooks_dir / script))
    return f"{prefix}python3 -I -S {path} {agent}"


def _hook_entries(
    agent: str,
    hooks: HookSpec,
    *,
    hooks_dir: Path,
    env: Mapping[str, str],
    http_url: str | None,
    with_token: bool,
) -> dict[str, object]:
    entries: dict[str, object] = {}
    for event, (script, matcher) in hooks.events.items():
        command = _command(hooks_dir, script, agent, env)
        if not hooks.grouped:
            entries[event] = {"command": command}
            continue
        handler: dict[str, object] = {"type": "command", "command": command}
        if http_url is not None and script == "notify.py" and event == "PostToolUse":
            # Claude Code posts the payload itself: no process per call, but also no check
            # of the server's identity and no content read (the server reads the file).
            handler = {"type": "http", "url": http_url}
            if with_token:
                handler["headers"] = {"Authorization": "Bearer $LIVE_MEMORY_TOKEN"}
                handler["allowedEnvVars"] = ["LIVE_MEMORY_TOKEN"]
        handler["timeout"] = hooks.timeout
        group: dict[str, object] = {"matcher": matcher} if matcher else {}
        entries[event] = {**group, "hooks": [handler]}
    return entries


def _fill(value: Any, url: str) -> Any:
    if isinstance(value, str):
        return value.replace("{url}", url)
    if isinstance(value, dict):
        return {k: _fill(v, url) for k, v in value.items()}
    return value


def _mcp_entry(spec: AgentSpec, url: str, with_token: bool) -> dict[str, object]:
    entry: dict[str, object] = _fill(spec.mcp_entry, url)
    if with_token and spec.token_header is not None:
        entry["headers"] = {"Authorization": f"Bearer {spec.token_header}"}
    elif with_token:
        entry["bearer_token_env_var"] = "LIVE_MEMORY_TOKEN"
    return entry


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise CommandFailed(f"cannot read {path}: {exc}", ExitCode.USAGE) from None


class _Plan:
    """The new text of every file, computed before anything is written."""

    def __init__(self) -> None:
        self.before: dict[Path, str | None] = {}
        self.after: dict[Path, str | None] = {}

    def edit(self, path: Path, change: Any) -> None:
        if path not in self.before:
            self.before[path] = self.after[path] = _read(path)
        self.after[path] = change(self.after[path])

    def changed(self) -> list[Path]:
        return [p for p in self.before if self.before[p] != self.after[p]]


def _plan(
    agent: str,
    place: Place,
    environ: Mapping[str, str],
    *,
    install: bool,
    http_hooks: bool = False,
) -> _Plan:
    """Every edit of `connect` (install) or of a structural `disconnect` (not install)."""
    spec = AGENTS[agent]
    base = default_server_url(environ)
    with_token = bool(environ.get("LIVE_MEMORY_TOKEN", "").strip())
    hooks_dir = data_root(environ) / "hooks"
    plan = _Plan()
    mcp_path = place.path(spec.mcp)
    assert mcp_path is not None  # every agent has an MCP file at both scopes
    entry = _mcp_entry(spec, f"{base}/mcp", with_token) if install else None
    if spec.mcp.format == "toml":
        flags: dict[tuple[str, str], object] | None = None
        if spec.hooks is not None:  # Codex runs hooks only behind this feature flag (0.171
            flags = {("features", "hooks"): True}  # calls `codex_hooks` deprecated)
        plan.edit(mcp_path, lambda t: edit_toml(t, str(mcp_path), spec.mcp.key, entry, flags))
    else:
        plan.edit(mcp_path, lambda t: edit_json(t, str(mcp_path), spec.mcp.key, entry))
    if spec.hooks is not None and (hooks_path := place.path(spec.hooks.target)) is not None:
        hooks = spec.hooks
        http_url = f"{base}/notify" if http_hooks else None
        env = _server_env(environ)
        entries = (
            _hook_entries(
                agent, hooks, hooks_dir=hooks_dir, env=env, http_url=http_url, with_token=with_token
            )
            if install
            else None
        )
        marks = (str(hooks_dir), f"{base}/notify")

        def ours(entry: object) -> bool:
            text = json.dumps(entry)
            return any(mark in text for mark in marks)

        plan.edit(hooks_path, lambda t: edit_hooks(t, str(hooks_path), entries, ours, hooks.top))
    if (rules_path := place.path(spec.rules)) is not None:
        if spec.rules.format == "block":
            plan.edit(rules_path, lambda t: edit_block(t, INSTRUCTIONS if install else None))
        else:
            plan.edit(rules_path, lambda t: _MDC_HEADER + INSTRUCTIONS if install else None)
    if spec.plugin is not None and (plugin_path := place.path(spec.plugin)) is not None:
        text = _plugin_text(hooks_dir, _server_env(environ)) if install else None
        plan.edit(plugin_path, lambda t: text)
    return plan


def _plugin_text(hooks_dir: Path, env: Mapping[str, str]) -> str:
    template = (_script_source() / "opencode-plugin.js").read_text(encoding="utf-8")
    text = template.replace("__LIVE_MEMORY_HOOKS__", str(hooks_dir).replace('"', '\\"'))
    return text.replace("__LIVE_MEMORY_ENV__", json.dumps(dict(env)))


def _digest(text: str | None) -> str | None:
    return None if text is None else hashlib.sha256(text.encode("utf-8")).hexdigest()


class _State:
    """connections.json: per agent and scope, each file written, its digest and its backup."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.path = root / STATE_FILE
        text = _read(self.path)
        try:
            loaded = json.loads(text) if text else {}
        except ValueError:
            loaded = {}
        self.data: dict[str, Any] = loaded if isinstance(loaded, dict) else {}

    def record(self, agent: str, scope: str) -> dict[str, Any]:
        return dict(self.data.get(agent, {}).get(scope, {}))

    def put(self, agent: str, scope: str, record: dict[str, Any] | None) -> None:
        scopes = self.data.setdefault(agent, {})
        if record is None:
            scopes.pop(scope, None)
            if not scopes:
                self.data.pop(agent)
        else:
            scopes[scope] = record
        write_atomically(self.path, (json.dumps(self.data, indent=2) + "\n").encode(), sync=False)


def _write(path: Path, text: str | None, mode: int | None = None) -> None:
    if text is None:
        path.unlink(missing_ok=True)
        return
    old_mode = path.stat().st_mode & 0o777 if path.exists() else None
    write_atomically(path, text.encode("utf-8"), sync=False)
    path.chmod(mode if mode is not None else old_mode if old_mode is not None else 0o644)


def connect(
    agent: str,
    *,
    environ: Mapping[str, str],
    project: Path | None,
    http_hooks: bool,
    client: ServerClient,
    out: TextIO,
    err: TextIO,
) -> int:
    """Write the agent's configuration; idempotent. Raises MalformedConfig (nothing written)."""
    spec = AGENTS[agent]
    if http_hooks and agent != "claude-code":
        raise CommandFailed("--http-hooks is for claude-code only", ExitCode.USAGE)
    place = Place(Path(environ.get("HOME") or Path.home()), project)
    plan = _plan(agent, place, environ, install=True, http_hooks=http_hooks)
    root = data_root(environ)
    if spec.hooks is not None or spec.plugin is not None:
        _install_scripts(root / "hooks")
    state = _State(root)
    record = state.record(agent, place.scope)
    files: dict[str, Any] = dict(record.get("files", {}))
    changed = plan.changed()
    for path in changed:
        known = files.get(str(path))
        if known is None:  # the first write of this connection: keep what was there
            before = plan.before[path]
            known = {"backup": None, "mode": None}
            if before is not None:
                backup = root / "backups" / agent / f"{_digest(str(path))}-{int(time.time())}"
                write_atomically(backup, before.encode("utf-8"), sync=False)
                known = {"backup": str(backup), "mode": path.stat().st_mode & 0o777}
        files[str(path)] = {**known, "wrote": _digest(plan.after[path])}
        _write(path, plan.after[path])
        # Recorded file by file: a failure half-way still leaves each written file undoable.
        state.put(agent, place.scope, {**record, "files": files})
    state.put(agent, place.scope, {"connected_at": int(time.time()), **record, "files": files})
    shown = ", ".join(str(p) for p in changed) or "nothing: already connected"
    out.write(f"connected {spec.title} ({place.scope}); changed {shown}\n")
    if spec.hooks is None and spec.plugin is None:
        out.write(f"{spec.title} has no hooks: nothing is learned passively from it\n")
    if place.path(spec.rules) is None:
        out.write(
            f"note: {spec.title} keeps user-wide instructions in its settings, not a file: "
            "see docs/AGENTS.md, or connect --project\n"
        )
    if environ.get("LIVE_MEMORY_TOKEN", "").strip():
        out.write(
            "note: the token is referenced as $LIVE_MEMORY_TOKEN: export it where the agent runs\n"
        )
    if not spec.reads_seen:
        _ensure_watcher(spec, environ, client, out, err)
    return ExitCode.OK


def _ensure_watcher(
    spec: AgentSpec, environ: Mapping[str, str], client: ServerClient, out: TextIO, err: TextIO
) -> None:
    """An agent whose reads no hook reports: the server's OS watcher sees its edits instead."""
    try:
        watcher = load_settings(environ).watcher
    except ConfigError as exc:
        raise CommandFailed(str(exc), ExitCode.USAGE) from exc
    why = f"{spec.title} reports no file reads to hooks"
    if watcher == "os":
        out.write(f"{why}: the server's OS watcher is on (LIVE_MEMORY_WATCHER=os)\n")
        return
    said = StringIO()
    config_set(
        environ,
        ["watcher=os"],
        data_dir=None,
        config_file=None,
        client=client,
        as_json=False,
        out=said,
        err=err,
    )
    out.write(f"{why}: turned on the server's OS watcher for its workspaces; {said.getvalue()}")


def disconnect(agent: str, *, environ: Mapping[str, str], project: Path | None, out: TextIO) -> int:
    """Undo `connect`: a file nothing else changed since goes back byte for byte (or away, if
    connect created it); one changed since loses only our entries."""
    spec = AGENTS[agent]
    place = Place(Path(environ.get("HOME") or Path.home()), project)
    state = _State(data_root(environ))
    files: dict[str, Any] = state.record(agent, place.scope).get("files", {})
    plan = _plan(agent, place, environ, install=False)  # validates every file first
    users = _other_users(agent, place, state)
    restored, edited = [], []
    for path in sorted({*plan.before, *(Path(p) for p in files)}):
        known = files.get(str(path))
        if path in users:  # another connected agent reads it too (AGENTS.md): it keeps it
            other = users[path]
            kept = state.record(other, place.scope)
            if known is not None and str(path) not in kept.get("files", {}):
                kept.setdefault("files", {})[str(path)] = known  # its undo, byte for byte
                state.put(other, place.scope, kept)
            continue
        current = _read(path)
        if known is not None and _digest(current) == known.get("wrote"):
            backup = known.get("backup")
            _write(
                path,
                Path(backup).read_text(encoding="utf-8") if backup else None,
                known.get("mode"),
            )
            restored.append(path)
        elif path in plan.before and plan.before[path] != plan.after[path]:
            _write(path, plan.after[path])
            edited.append(path)
        if known is not None and known.get("backup"):
            Path(known["backup"]).unlink(missing_ok=True)
    state.put(agent, place.scope, None)
    if not restored and not edited:
        out.write(f"{spec.title} ({place.scope}) was not connected; nothing changed\n")
        return ExitCode.OK
    if restored:
        out.write(f"restored {', '.join(map(str, restored))} as they were before connect\n")
    if edited:
        out.write(
            f"removed live-memory's entries from {', '.join(map(str, edited))} "
            "(changed since connect: the rest is kept)\n"
        )
    return ExitCode.OK


def _other_users(agent: str, place: Place, state: _State) -> dict[Path, str]:
    """Files of this scope that another connected agent also uses -> that agent."""
    users: dict[Path, str] = {}
    for other, scopes in state.data.items():
        spec = AGENTS.get(other)
        if other == agent or spec is None or place.scope not in scopes:
            continue
        hooks = spec.hooks.target if spec.hooks else None
        for target in (spec.mcp, hooks, spec.rules, spec.plugin):
            path = place.path(target) if target is not None else None
            if path is not None:
                users.setdefault(path, other)
    return users


def list_connections(environ: Mapping[str, str], *, as_json: bool, out: TextIO) -> int:
    """What is connected, where, and when its hooks last ran (hook clients touch a stamp)."""
    root = data_root(environ)
    state = _State(root)
    now = time.time()
    rows = []
    for agent, scopes in sorted(state.data.items()):
        try:
            fired: float | None = (root / "fired" / agent).stat().st_mtime
        except OSError:
            fired = None
        spec = AGENTS.get(agent)
        for scope, record in sorted(scopes.items()):
            rows.append(
                {
                    "agent": agent,
                    "scope": scope,
                    "files": sorted(record.get("files", {})),
                    "hooks": spec is not None
                    and (spec.hooks is not None or spec.plugin is not None),
                    "hooks_last_fired": fired,
                    "hooks_fired_recently": fired is not None and now - fired < RECENT_S,
                }
            )
    if as_json:
        out.write(render_json({"connections": rows}) + "\n")
        return ExitCode.OK
    if not rows:
        out.write(
            f"no agent is connected (live-memory connect AGENT; agents: {', '.join(AGENTS)})\n"
        )
    for row in rows:
        if not row["hooks"]:
            fired_text = "no hooks (MCP only)"
        elif row["hooks_last_fired"] is None:
            fired_text = "hooks never fired yet"
        else:
            ago = int(now - float(row["hooks_last_fired"]))
            fired_text = f"hooks last fired {ago} s ago"
        out.write(f"{row['agent']} ({row['scope']}): {fired_text}\n")
        for path in row["files"]:
            out.write(f"  {path}\n")
    return ExitCode.OK
