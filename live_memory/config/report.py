"""What `GET /config` answers: the effective settings, where each came from, what a change
needs.

`config get` prints this for the running server (not for the shell it is typed in), and
`config set` uses `RESTART_KEYS` to say which of its keys applied at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from live_memory.config import constants as C
from live_memory.config.loader import config_items
from live_memory.config.settings import Settings
from live_memory.config.variables import VARIABLES, env_name

__all__ = ["RESTART_KEYS", "config_report", "setting_source"]

RESTART_KEYS: Final = frozenset(
    {
        "symbol_index",
        "include_vendored",  # the tree, the index and the watches are built with it
        "host",
        "port",
        "data_dir",
        "token",  # the guard is built with the app
        "allowed_hosts",
        "watcher",  # the watcher actor is started (or not) with the server
        "async_tools",  # the MCP tool list is built with the app
        "log_level",
        "log_file",
        "passivate_after_s",  # the passivation sweep is scheduled at start
        "backend",  # the actor runtime is chosen at start
        "ray_address",
        "ray_namespace",
        "max_stored_facts",  # the fact store is opened with its policy at start
        "fact_retire_after_s",
    }
)
"""Settings read once at start: `POST /reload` re-reads them, but they change only with a
restart. Every other setting applies to the next question (or the next workspace activation)."""


def setting_source(key: str, environ: Mapping[str, str], file_values: Mapping[str, object]) -> str:
    """Where `key`'s value comes from: its variable, the config file, or the default."""
    name = env_name(key)
    if environ.get(name, "").strip():
        return name
    if key in file_values:
        return "config file"
    if key == "data_dir" and environ.get(C.DATA_DIR_ENV_FALLBACK, "").strip():
        return C.DATA_DIR_ENV_FALLBACK
    return "default"


def config_report(
    settings: Settings, environ: Mapping[str, str], file_values: Mapping[str, object]
) -> dict[str, object]:
    """`{config_file, data_dir, settings, sources, restart_required}`; secrets masked."""
    items = config_items(settings)
    defaults = config_items(Settings())
    sources: dict[str, str] = {}
    for key in VARIABLES:
        source = setting_source(key, environ, file_values)
        if source == "default" and key in _FLAG_KEYS and items.get(key) != defaults.get(key):
            source = "command line"  # `serve --host/--port/--data-dir`
        sources[key] = source
    sources.update(_detected_sources(settings, environ, sources))
    return {
        "config_file": str(settings.config_file or settings.data_dir / C.CONFIG_FILE_NAME),
        "data_dir": str(settings.data_dir),
        "settings": items,
        "sources": sources,
        "restart_required": sorted(RESTART_KEYS),
    }


_FLAG_KEYS: Final = frozenset({"host", "port", "data_dir"})
_PROVIDER_URL_ENV: Final = {
    C.PROVIDER_ANTHROPIC: "ANTHROPIC_BASE_URL",
    C.PROVIDER_OPENAI: "OPENAI_BASE_URL",
}


def _detected_sources(
    settings: Settings, environ: Mapping[str, str], sources: Mapping[str, str]
) -> dict[str, str]:
    """Where provider detection took what no LIVE_MEMORY_* layer set: the provider's own
    variables (`ANTHROPIC_API_KEY`, `OPENAI_BASE_URL`…) or a Claude Code login, not "default"."""
    found: dict[str, str] = {}
    if sources["api_key"] == "default":
        if settings.subscription:
            found["api_key"] = f"Claude Code login ({settings.credentials_file})"
        elif settings.api_key is not None and settings.api_key_source:
            found["api_key"] = settings.api_key_source
    url_env = _PROVIDER_URL_ENV.get(settings.provider or "")
    if sources["base_url"] == "default" and url_env and environ.get(url_env, "").strip():
        found["base_url"] = url_env
    if sources["provider"] == "default" and settings.provider is not None:
        given = found.get("api_key") or found.get("base_url")
        if given is None:
            given = next(
                (s for k in ("api_key", "base_url") if (s := sources[k]) != "default"), None
            )
        if given is not None:
            found["provider"] = f"detected from {given}"
    return found
