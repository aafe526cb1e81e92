"""`live-memory config get [KEY]` and `config set KEY=VALUE…` (writes config.json, hot reload).

Which config.json? `--config FILE` if given; else the one the running server reports on
`/health` (`config_file`), so a CLI in a terminal edits the same file as a server started with
another environment (a plugin-started server keeps its data in `$CLAUDE_PLUGIN_DATA`); else the
one this shell's settings name (`--data-dir`, LIVE_MEMORY_DATA_DIR, the default).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TextIO

from live_memory.cli.client import ServerClient, ServerDown, ServerRejected, ServerUnreachable
from live_memory.cli.outcome import CommandFailed, ExitCode
from live_memory.cli.render import render_config, render_json
from live_memory.config import Settings, config_items, load_settings, write_config
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
    """Show the effective settings as seen with the server's config file; secrets masked."""
    path = _config_path(environ, data_dir, config_file, client)
    settings = _load(environ, data_dir, path)
    items = config_items(settings)
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
        out.write(f"# {path}\n{render_config(list(items.items()))}\n")
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
    """Validate and write the updates, then ask the server to reload.

    The file is the source of truth: when the server is down the change is kept and applies
    at its next start (exit 0, with a note on stderr).
    """
    updates = parse_assignments(pairs)
    path = _config_path(environ, data_dir, config_file, client)
    try:
        content = write_config(path, updates, environ=environ)
    except ConfigError as exc:
        raise CommandFailed(str(exc), ExitCode.USAGE) from exc
    except OSError as exc:
        raise CommandFailed(f"cannot write {path}: {exc}", ExitCode.FAILED) from exc
    reloaded = True
    try:
        client.post("/reload", {})
    except ServerDown:
        reloaded = False
        err.write(f"note: the server is not running; {path} applies when it starts\n")
    except (ServerRejected, ServerUnreachable) as exc:
        raise CommandFailed(f"wrote {path}, but the reload failed: {exc.message}") from exc
    if as_json:
        out.write(render_json({"config_file": str(path), "content": content, "reloaded": reloaded}))
        out.write("\n")
    else:
        changed = ", ".join(_normalize(key) for key in updates)
        out.write(f"wrote {path} ({changed}){'; server reloaded' if reloaded else ''}\n")
    return ExitCode.OK


def _normalize(key: str) -> str:
    return key.strip().lower().removeprefix(C.ENV_PREFIX.lower())


def _config_path(
    environ: Mapping[str, str], data_dir: str | None, config_file: str | None, client: ServerClient
) -> Path:
    if config_file:
        return Path(config_file).expanduser().absolute()
    if data_dir is None:
        reported = _server_config_file(client)
        if reported is not None:
            return reported
    path = _load(environ, data_dir, None).config_file
    if path is None:
        raise CommandFailed("the settings name no config file; pass --config FILE", ExitCode.USAGE)
    return path


def _server_config_file(client: ServerClient) -> Path | None:
    try:
        health = client.get("/health").json()
    except CommandFailed:
        return None
    reported = health.get("config_file") if isinstance(health, Mapping) else None
    return Path(reported) if isinstance(reported, str) and reported else None


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
