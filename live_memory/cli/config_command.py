"""`live-memory config get [KEY]` and `config set KEY=VALUE…` (writes config.json, hot reload).

`config get` shows the running server's settings (`GET /config`), not this shell's. Which
config.json does `set` edit? `--config FILE` if given; else the one this shell's settings name
(`--data-dir`, LIVE_MEMORY_DATA_DIR, the default). Never a path a server reports: whatever
listens on the port could name any file (`~/.config/autostart/…`) for the CLI to write. When
the server reads another file, `set` says so and names the flag that edits that one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TextIO

from live_memory.cli.client import (
    NotOurServer,
    ServerClient,
    ServerDown,
    ServerRejected,
    ServerUnreachable,
)
from live_memory.cli.outcome import CommandFailed, ExitCode
from live_memory.cli.render import render_config, render_json
from live_memory.config import (
    RESTART_KEYS,
    VARIABLES,
    Settings,
    config_items,
    load_settings,
    write_config,
)
from live_memory.config import constants as C
from live_memory.errors import ConfigError

__all__ = ["config_get", "config_set", "parse_assignments"]


def parse_assignments(pairs: Sequence[str]) -> dict[str, str]:
    """`["model=x", "keep_warm="]` -> `{"model": "x", "keep_warm": ""}`; usage error otherwise."""
    updates: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise CommandFailed(
                f"expected KEY=VALUE (an empty VALUE removes the key), got {pair!r}",
                ExitCode.USAGE,
            )
        updates[key.strip()] = value
    return updates


def config_get(
    environ: Mapping[str, str],
    key: str | None,
    *,
    data_dir: str | None,
    config_file: str | None,
    client: ServerClient,
    as_json: bool,
    out: TextIO,
) -> int:
    """Show the running server's effective settings (`GET /config`); secrets masked.

    With `--config`/`--data-dir`, or when no server answers, what this shell would start a
    server with instead, said so in a comment line.
    """
    report = None if data_dir or config_file else _server_report(client)
    sources: Mapping[str, object] = {}
    if report is not None:
        items = dict(_mapping(report.get("settings")))
        sources = _mapping(report.get("sources"))
        header = [f"# {report.get('config_file')} (the server at {client.base_url})"]
    else:
        path = _config_path(environ, data_dir, config_file)
        items = config_items(_load(environ, data_dir, path))
        header = [f"# {path}"]
        if not data_dir and not config_file:
            header.append(
                f"# no server of yours answers at {client.base_url}: these are the values this "
                "shell and the files would start one with"
            )
    if key is not None:
        name = _normalize(key)
        if name not in items:
            raise CommandFailed(
                f"unknown setting {key!r}; known: {', '.join(items)}", ExitCode.USAGE
            )
        items = {name: items[name]}
    if as_json:
        out.write(render_json(items) + "\n")
    elif key is not None:
        value = items[_normalize(key)]
        shown = "" if value is None else value if isinstance(value, str) else json.dumps(value)
        out.write(shown + "\n")
    else:
        rows = [(name, _with_source(value, sources.get(name))) for name, value in items.items()]
        out.write("\n".join(header) + f"\n{render_config(rows)}\n")
    return ExitCode.OK


def config_set(
    environ: Mapping[str, str],
    pairs: Sequence[str],
    *,
    data_dir: str | None,
    config_file: str | None,
    client: ServerClient,
    as_json: bool,
    out: TextIO,
    err: TextIO,
) -> int:
    """Validate the whole resulting configuration, write it, then ask the server to reload.

    The file is the source of truth: when the server is down the change is kept and applies
    at its next start (exit 0, with a note on stderr). The output names the keys that applied
    at once, those that need a restart, and those the server's environment overrides.
    """
    updates = parse_assignments(pairs)
    report = None if data_dir or config_file else _server_report(client)
    path = _config_path(environ, data_dir, config_file)
    _refuse_port(updates, path)
    try:
        content = write_config(path, updates, environ=_validation_env(environ, report))
    except ConfigError as exc:
        raise CommandFailed(f"{exc}; {path} is unchanged", ExitCode.USAGE) from exc
    except OSError as exc:
        raise CommandFailed(f"cannot write {path}: {exc}", ExitCode.FAILED) from exc
    reloaded = True
    try:
        client.post("/reload", {})
    except ServerDown:
        reloaded = False
        err.write(f"note: the server is not running; {path} applies when it starts\n")
    except NotOurServer as exc:
        reloaded = False
        err.write(f"note: {exc.message}; {path} applies when your server starts\n")
    except (ServerRejected, ServerUnreachable) as exc:
        raise CommandFailed(f"wrote {path}, but the reload failed: {exc.message}") from exc
    changed = [_normalize(key) for key in updates]
    sources = _mapping(report.get("sources")) if report is not None else {}
    overridden = {
        key: str(sources[key])
        for key in changed
        if str(sources.get(key, "")).startswith(C.ENV_PREFIX)
    }
    restart = [key for key in changed if key in RESTART_KEYS and key not in overridden]
    applied = [key for key in changed if key not in RESTART_KEYS and key not in overridden]
    if as_json:
        body = {
            "config_file": str(path),
            "content": content,
            "reloaded": reloaded,
            "applied": applied if reloaded else [],
            "restart_required": restart,
            "overridden_by_environment": overridden,
        }
        out.write(render_json(body) + "\n")
        return ExitCode.OK
    line = f"wrote {path} ({', '.join(changed)})"
    if reloaded:
        line += "; server reloaded"
        if applied:
            line += f"; applied now: {', '.join(applied)}"
    if restart:
        line += f"; needs a restart of the server: {', '.join(restart)}"
    out.write(line + "\n")
    served = report.get("config_file") if report is not None else None
    if isinstance(served, str) and served and Path(served) != path:
        out.write(
            f"note: the server at {client.base_url} reads {served}, not this file; "
            f"to change that one: live-memory config set --config {served} …\n"
        )
    for key, variable in overridden.items():
        out.write(
            f"note: {key} has no effect while the server's environment sets {variable} "
            "(the environment wins over the config file)\n"
        )
    return ExitCode.OK


def _refuse_port(updates: Mapping[str, str], path: Path) -> None:
    """A port in config.json would move the server away from its clients: the CLI, the
    plugin's .mcp.json and its hooks all look at LIVE_MEMORY_PORT (or 7711), never at this
    file. So the change is refused with how to make it (removing the key stays allowed)."""
    value = next((v.strip() for k, v in updates.items() if _normalize(k) == "port"), "")
    if not value:
        return
    try:
        VARIABLES["port"](value, "port")
    except ConfigError as exc:
        raise CommandFailed(f"{exc}; {path} is unchanged", ExitCode.USAGE) from exc
    raise CommandFailed(
        f"port is not set in config.json: the CLI, the plugin's .mcp.json and its hooks find "
        f"the server at LIVE_MEMORY_PORT (default {C.DEFAULT_PORT}), not from this file, so "
        f"after a restart every client would lose it. To move the server, set "
        f"LIVE_MEMORY_PORT={value} where the server starts (~/.config/live-memory/env for the "
        "service) and where Claude Code and your shell start, then restart the server; "
        f"{path} is unchanged",
        ExitCode.USAGE,
    )


def _normalize(key: str) -> str:
    return key.strip().lower().removeprefix(C.ENV_PREFIX.lower())


def _mapping(value: object) -> Mapping[str, object]:
    return value if isinstance(value, Mapping) else {}


def _with_source(value: object, source: object) -> object:
    if not isinstance(source, str) or source == "default":
        return value
    shown = "-" if value is None else value if isinstance(value, str) else json.dumps(value)
    return f"{shown}   # {source}"


def _server_report(client: ServerClient) -> Mapping[str, object] | None:
    """The server's `GET /config`, or None when no server of ours (or an older one) answers."""
    try:
        report = client.get("/config").json()
    except (ServerDown, ServerUnreachable, NotOurServer):
        return None
    except ServerRejected as exc:
        if exc.status == 404:  # a server from before /config
            return None
        raise
    return report if isinstance(report, Mapping) else None


def _validation_env(
    environ: Mapping[str, str], report: Mapping[str, object] | None
) -> Mapping[str, str]:
    """This shell's environment, plus the bind settings the server has from its own: the
    checks that combine settings (a public host needs a token) must see the server's side."""
    if report is None:
        return environ
    env = dict(environ)
    sources = _mapping(report.get("sources"))
    values = _mapping(report.get("settings"))
    for key in ("host", "port", "token"):
        source = sources.get(key)
        value = values.get(key)
        if isinstance(source, str) and source.startswith(C.ENV_PREFIX) and value is not None:
            env.setdefault(source, str(value))
    return env


def _config_path(environ: Mapping[str, str], data_dir: str | None, config_file: str | None) -> Path:
    """The file this shell's settings name; never one a server reports (see the docstring)."""
    if config_file:
        return Path(config_file).expanduser().absolute()
    path = _load(environ, data_dir, None).config_file
    if path is None:
        raise CommandFailed("the settings name no config file; pass --config FILE", ExitCode.USAGE)
    return path


def _load(environ: Mapping[str, str], data_dir: str | None, path: Path | None) -> Settings:
    overrides = {"data_dir": data_dir} if data_dir else None
    try:
        return load_settings(
            environ,
            config_file=path if path is not None and path.exists() else None,
            overrides=overrides,
        )
    except ConfigError as exc:
        raise CommandFailed(str(exc), ExitCode.USAGE) from exc
