"""The environment the supervised service runs with, resolved once for everyone who starts it.

The systemd unit `install-service` writes reads `~/.config/live-memory/env` (EnvironmentFile)
on top of the user manager's small environment. A server started any other way for the same
machine — the plugin's session-start backstop, `live-memory serve --as-service` — builds its
environment here, the same way: so it opens the same data directory and config file and talks
to the same provider with the same model, instead of inheriting whatever the launching program
(Claude Code, a terminal) happens to export (`CLAUDE_PLUGIN_DATA`, `ANTHROPIC_*`, …).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Final

from live_memory.config import constants as C
from live_memory.errors import ConfigError
from live_memory.regular_file import read_regular

__all__ = [
    "SERVICE_BASE_VARIABLES",
    "parse_env_file",
    "service_env_file",
    "service_environment",
    "session_mismatch",
]

SERVICE_BASE_VARIABLES: Final = frozenset(
    {"HOME", "USER", "LOGNAME", "PATH", "SHELL", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR"}
    | {"XDG_CONFIG_HOME", "XDG_RUNTIME_DIR", "XDG_DATA_HOME"}
)
"""What a user service manager passes on by itself (login identity, locale, paths)."""

_ENV_FILE_MAX_BYTES: Final = 256 * 1024


def service_env_file(environ: Mapping[str, str]) -> Path:
    """`~/.config/live-memory/env` of the user `environ` describes."""
    home = Path(environ.get("HOME") or Path.home())
    return home / Path(C.SERVICE_ENV_FILE).relative_to("~")


def parse_env_file(text: str, label: str) -> dict[str, str]:
    """systemd EnvironmentFile lines: `KEY=value`, `#`/`;` comments, optional `export `, a
    value in single or double quotes taken as is. Raises ConfigError naming the line."""
    values: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        line = line.removeprefix("export ").lstrip()
        key, sep, value = line.partition("=")
        key = key.strip()
        if not sep or not key.replace("_", "a").isalnum() or key[0].isdigit():
            raise ConfigError(f"{label}:{number}: expected KEY=value, got {raw.strip()[:80]!r}")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        values[key] = value
    return values


def service_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The service's environment: the base variables of `environ`, then the env file's lines.

    Raises ConfigError when the env file exists but cannot be read or parsed.
    """
    env = {key: value for key, value in environ.items() if key in SERVICE_BASE_VARIABLES}
    path = service_env_file(environ)
    try:
        data = read_regular(path, _ENV_FILE_MAX_BYTES + 1)
    except FileNotFoundError:
        return env
    except OSError as exc:
        raise ConfigError(f"cannot read the service environment {path}: {exc}") from exc
    if len(data) > _ENV_FILE_MAX_BYTES:
        raise ConfigError(f"the service environment {path} is over {_ENV_FILE_MAX_BYTES} bytes")
    env.update(parse_env_file(data.decode("utf-8", errors="replace"), str(path)))
    return env


def session_mismatch(caller: Mapping[str, str], service: Mapping[str, str]) -> str | None:
    """Why a server with the `service` environment would not be the one the `caller` (a Claude
    Code session: its MCP URL and hooks use LIVE_MEMORY_HOST/PORT/TOKEN) talks to, or None."""
    path = service_env_file(caller)
    for name, default in (
        ("LIVE_MEMORY_PORT", str(C.DEFAULT_PORT)),
        ("LIVE_MEMORY_HOST", C.DEFAULT_HOST),
    ):
        theirs = service.get(name, "").strip() or default
        ours = caller.get(name, "").strip() or default
        if name == "LIVE_MEMORY_HOST":
            theirs, ours = _reachable(theirs), _reachable(ours)
        if theirs != ours:
            return (
                f"the service is configured with {name}={theirs} ({path}) but this session "
                f"expects {ours}: set {name} to the same value in both"
            )
    if service.get("LIVE_MEMORY_TOKEN", "").strip() != caller.get("LIVE_MEMORY_TOKEN", "").strip():
        return (
            f"LIVE_MEMORY_TOKEN differs between the service ({path}) and this session: "
            "set the same token in both"
        )
    return None


def _reachable(host: str) -> str:
    """The address a client uses for a bind address (a wildcard is reached on loopback)."""
    return {"0.0.0.0": "127.0.0.1", "::": "::1", "localhost": "127.0.0.1", "": "127.0.0.1"}.get(
        host, host
    )
