"""The LIVE_MEMORY_* variables: their config.json keys, parsers and validation messages.

A parser takes a raw value — a string from the environment or a CLI flag, or any JSON value
from config.json — plus a label naming where it came from (`LIVE_MEMORY_PORT`,
`port in /data/config.json`), and returns the typed value or raises `ConfigError` with a
message naming that label and the bad value. Path variables come back as strings; the loader
anchors them (it knows the home and data directories).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Final
from urllib.parse import urlsplit

import orjson

from live_memory.config import constants as C
from live_memory.errors import ConfigError

__all__ = [
    "PATH_KEYS",
    "SECRET_KEYS",
    "VARIABLES",
    "Parser",
    "env_name",
    "is_unset",
    "parse_secret",
    "parse_url",
    "show",
]

Parser = Callable[[object, str], object]

_TRUE: Final = frozenset({"true", "1", "yes", "on"})
_FALSE: Final = frozenset({"false", "0", "no", "off"})
_SHOW_MAX: Final = 120
_EXTRA_BODY_MAX_CHARS: Final = 16 * 1024  # an extra-body object is a few routing fields
_EXTRA_BODY_RESERVED: Final = frozenset({"model", "messages", "tools", "stream", "stream_options"})


def env_name(key: str) -> str:
    """The environment variable of a config key: `port` -> `LIVE_MEMORY_PORT`."""
    return C.ENV_PREFIX + key.upper()


def is_unset(raw: object) -> bool:
    """An absent, null or blank value means "not set at this layer"."""
    return raw is None or (isinstance(raw, str) and not raw.strip())


def show(raw: object) -> str:
    """A bad value as it should appear in an error message (bounded, unambiguous)."""
    if isinstance(raw, str):
        text = raw if len(raw) <= _SHOW_MAX else raw[:_SHOW_MAX] + "..."
        plain = text and text.strip() == text and text.isprintable()
        return text if plain else repr(text)
    try:
        text = orjson.dumps(raw).decode()
    except TypeError:
        text = repr(raw)
    return text if len(text) <= _SHOW_MAX else text[:_SHOW_MAX] + "..."


def _integer(lo: int, hi: int | None) -> Parser:
    span = f"{lo}-{hi}" if hi is not None else f"at least {lo}"

    def parse(raw: object, label: str) -> int:
        value: int | None = None
        if isinstance(raw, int) and not isinstance(raw, bool):
            value = raw
        elif isinstance(raw, str):
            try:
                value = int(raw.strip(), 10)
            except ValueError:
                value = None
        if value is None:
            raise ConfigError(f"{label} must be an integer {span}, got {show(raw)}")
        if value < lo or (hi is not None and value > hi):
            raise ConfigError(f"{label} must be {span}, got {show(raw)}")
        return value

    return parse


def _number(lo: float, *, lo_open: bool = False, hi: float | None = None) -> Parser:
    span = ("greater than " if lo_open else "at least ") + f"{lo:g}"
    if hi is not None:
        span += f" and at most {hi:g}"

    def parse(raw: object, label: str) -> float:
        value: float | None = None
        if isinstance(raw, int | float) and not isinstance(raw, bool):
            value = float(raw)
        elif isinstance(raw, str):
            try:
                value = float(raw.strip())
            except ValueError:
                value = None
        if value is None or not math.isfinite(value):
            raise ConfigError(f"{label} must be a number {span}, got {show(raw)}")
        if value < lo or (lo_open and value == lo) or (hi is not None and value > hi):
            raise ConfigError(f"{label} must be {span}, got {show(raw)}")
        return value

    return parse


def _boolean(raw: object, label: str) -> bool:
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, int) and raw in (0, 1):
        return bool(raw)
    if isinstance(raw, str):
        word = raw.strip().lower()
        if word in _TRUE:
            return True
        if word in _FALSE:
            return False
    raise ConfigError(f"{label} must be true or false (or 1/0, yes/no, on/off), got {show(raw)}")


def _choice(*choices: str) -> Parser:
    def parse(raw: object, label: str) -> str:
        if isinstance(raw, str) and raw.strip().lower() in choices:
            return raw.strip().lower()
        raise ConfigError(f"{label} must be one of {', '.join(choices)}, got {show(raw)}")

    return parse


def _word(raw: object, label: str) -> str:
    if isinstance(raw, str):
        text = raw.strip()
        if text and text.isprintable() and not any(ch.isspace() for ch in text):
            return text
    raise ConfigError(f"{label} must be a name without spaces, got {show(raw)}")


def _secret(raw: object, label: str) -> str:
    # The value is never echoed: it is a credential.
    if isinstance(raw, str):
        text = raw.strip()
        if text and text.isprintable() and not any(ch.isspace() for ch in text):
            return text
    raise ConfigError(f"{label} must be a string without spaces or control characters")


def _url(raw: object, label: str) -> str:
    if isinstance(raw, str):
        text = raw.strip()
        try:
            parts = urlsplit(text)
            _ = parts.port  # raises ValueError on a malformed port
        except ValueError:
            parts = None
        if (
            parts is not None
            and parts.scheme in ("http", "https")
            and parts.hostname
            and text.isprintable()
            and not any(ch.isspace() for ch in text)
        ):
            return text
    raise ConfigError(f"{label} must be an http:// or https:// URL, got {show(raw)}")


def _globs(raw: object, label: str) -> tuple[str, ...]:
    if isinstance(raw, str):
        items: list[object] = list(raw.split(","))
    elif isinstance(raw, list):
        items = list(raw)
    else:
        raise ConfigError(f"{label} must be comma-separated glob patterns, got {show(raw)}")
    patterns: list[str] = []
    for item in items:
        if not isinstance(item, str):
            raise ConfigError(f"{label} patterns must be strings, got {show(item)}")
        pattern = item.strip()
        if not pattern:
            continue
        if "\x00" in pattern or not pattern.isprintable():
            raise ConfigError(f"{label} has a pattern with control characters: {show(pattern)}")
        if pattern.startswith(("/", "~", "\\")):
            raise ConfigError(
                f"{label} patterns must be relative to the workspace root, got {show(pattern)}"
            )
        patterns.append(pattern)
    return tuple(patterns)


def _host_names(raw: object, label: str) -> tuple[str, ...]:
    """Comma-separated host names (or IP literals) the Host header may carry."""
    items = raw.split(",") if isinstance(raw, str) else raw
    if not isinstance(items, list | tuple):
        raise ConfigError(f"{label} must be comma-separated host names, got {show(raw)}")
    names: list[str] = []
    for item in items:
        name = item.strip().strip("[]").lower() if isinstance(item, str) else ""
        if isinstance(item, str) and not item.strip():
            continue
        if not name or not all(ch.isalnum() or ch in ".-:" for ch in name):
            raise ConfigError(
                f"{label} must be host names without ports (e.g. live-memory,myhost.lan), "
                f"got {show(item)}"
            )
        names.append(name)
    return tuple(names)


def _roots(raw: object, label: str) -> tuple[str, ...]:
    """Absolute directories (or `~/...`), comma-separated or a JSON list; the loader anchors
    and resolves them."""
    items = raw.split(",") if isinstance(raw, str) else raw
    if not isinstance(items, list):
        raise ConfigError(f"{label} must be comma-separated absolute directories, got {show(raw)}")
    roots: list[str] = []
    for item in items:
        text = item.strip() if isinstance(item, str) else None
        if text == "":
            continue
        if text is None or "\x00" in text or not text.isprintable() or text[0] not in "/~":
            raise ConfigError(f"{label} must list absolute directories, got {show(item)}")
        roots.append(text)
    return tuple(roots)


def _extra_body(raw: object, label: str) -> dict[str, object]:
    """A JSON object merged into every OpenAI-compatible request (OpenRouter's `provider`,
    `transforms`…); the fields the adapter itself sends cannot be replaced through it."""
    value = raw
    if isinstance(raw, str):
        if len(raw) > _EXTRA_BODY_MAX_CHARS:
            raise ConfigError(f"{label} must be at most {_EXTRA_BODY_MAX_CHARS} characters")
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise ConfigError(f"{label} must be a JSON object, got {show(raw)} ({exc})") from exc
    if not isinstance(value, dict):
        raise ConfigError(f"{label} must be a JSON object, got {show(raw)}")
    reserved = sorted(_EXTRA_BODY_RESERVED.intersection(value))
    if reserved:
        raise ConfigError(f"{label} cannot set {', '.join(reserved)}: Live Memory sends those")
    return value


def _path(raw: object, label: str) -> str:
    if isinstance(raw, str) and raw.strip() and "\x00" not in raw and raw.isprintable():
        return raw.strip()
    raise ConfigError(f"{label} must be a file system path, got {show(raw)}")


def _ray_address(raw: object, label: str) -> str:
    """`auto`, or `[ray://]host:port` (an empty value is "unset": a private instance)."""
    if isinstance(raw, str):
        text = raw.strip()
        if text == "auto":
            return text
        parts = urlsplit(text if "://" in text else f"ray://{text}")
        try:
            port = parts.port
        except ValueError:
            port = None
        if parts.scheme == "ray" and parts.hostname and port and parts.path in ("", "/"):
            return text
    raise ConfigError(f"{label} must be auto or host:port (or ray://host:port), got {show(raw)}")


VARIABLES: Final[dict[str, Parser]] = {
    "host": _word,
    "port": _integer(1, 65535),
    "allowed_hosts": _host_names,
    "data_dir": _path,
    "token": _secret,
    "provider": _choice(C.PROVIDER_ANTHROPIC, C.PROVIDER_OPENAI),
    "base_url": _url,
    "api_key": _secret,
    "openai_extra_body": _extra_body,
    "model": _word,
    "summary_model": _word,
    "max_context_tokens": _integer(C.MIN_CONTEXT_TOKENS, None),
    "compaction_threshold": _number(0.0, lo_open=True, hi=1.0),
    "compaction_floor": _number(0.0, lo_open=True, hi=1.0),
    "default_timeout_s": _number(0.0, lo_open=True),
    "mcp_timeout_s": _number(0.0, lo_open=True),
    "max_answer_tokens": _integer(C.MIN_ANSWER_TOKENS, C.MAX_ANSWER_TOKENS_CAP),
    "concurrency": _choice("parallel", "serial"),
    "max_parallel_queries": _integer(1, C.MAX_PARALLEL_QUERIES_CAP),
    "async_tools": _boolean,
    "keep_warm": _boolean,
    "keep_warm_interval_s": _number(0.0, lo_open=True),
    "keep_warm_max_idle_s": _number(0.0, lo_open=True),
    "dashboard_stuck_actor_s": _number(0.0, lo_open=True),
    "preload_globs": _globs,
    "file_globs": _globs,
    "include_vendored": _boolean,
    "passive_ingestion": _boolean,
    "force_explore_when_cold": _boolean,
    "symbol_index": _boolean,
    "max_held_bytes": _integer(0, None),
    "watcher": _choice("off", "os"),
    "watch_max_per_root": _integer(1, None),
    "watch_max_total": _integer(1, None),
    "canonicalize_workspace": _boolean,
    "repo_root_mode": _choice("nearest", "outermost"),
    "allowed_roots": _roots,
    "log_level": _choice("debug", "info", "warning", "error", "critical"),
    "log_file": _path,
    "price_input": _number(0.0),
    "price_output": _number(0.0),
    "price_cache_read_mult": _number(0.0),
    "price_cache_write_mult": _number(0.0),
    "daily_budget_usd": _number(0.0, lo_open=True),
    "workspace_daily_budget_usd": _number(0.0, lo_open=True),
    "use_subscription": _boolean,
    "oauth_token_url": _url,
    "insights_root": _path,
    "passivate_after_s": _number(0.0, lo_open=True),
    "workspaces_active_max": _integer(1, None),
    "max_body_bytes": _integer(C.MIN_BODY_BYTES, None),
    "max_notify_events": _integer(1, None),
    "max_question_chars": _integer(1, None),
    "max_import_facts": _integer(1, None),
    "max_ledger_facts": _integer(1, None),
    "max_stored_facts": _integer(1, None),
    "fact_retire_after_s": _number(0.0, lo_open=True),
    "resident_facts_share": _number(0.0, hi=0.5),
    "max_pending_questions": _integer(0, None),
    "request_timeout_s": _number(0.0, lo_open=True),
    "max_connections": _integer(C.MIN_CONNECTIONS, None),
    "backend": _choice(*C.BACKENDS),
    "ray_address": _ray_address,
    "ray_namespace": _word,
}
"""Config key (= Settings field = env name without prefix, lower case) -> parser."""

PATH_KEYS: Final = frozenset({"data_dir", "log_file", "insights_root"})
SECRET_KEYS: Final = frozenset({"token", "api_key"})

# Parsers shared with the loader for the providers' own variables.
parse_url: Final = _url
parse_secret: Final = _secret
