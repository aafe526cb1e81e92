"""Build the one `Settings` object from CLI overrides > environment > config.json > defaults.

Every layer is parsed and validated (a bad config.json value is an error even when the
environment overrides it), then the winning values are merged, cross-checked and completed with
the detected provider. `write_config` validates a change the same way before writing it.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import orjson

from live_memory.atomic_file import write_atomically
from live_memory.config import constants as C
from live_memory.config.exposure import check_exposure
from live_memory.config.provider_detection import detect_provider
from live_memory.config.settings import Settings
from live_memory.config.start_check import check_startable
from live_memory.config.variables import PATH_KEYS, SECRET_KEYS, VARIABLES, env_name, is_unset
from live_memory.errors import ConfigError
from live_memory.regular_file import read_regular

__all__ = ["config_file_values", "config_items", "load_settings", "write_config"]

logger = logging.getLogger(__name__)

# A layer's parsed values: key -> (value, label naming where it came from).
_Layer = dict[str, tuple[object, str]]


def load_settings(
    environ: Mapping[str, str],
    *,
    config_file: Path | None = None,
    overrides: Mapping[str, object] | None = None,
    home: Path | None = None,
) -> Settings:
    """Load and validate the settings.

    `config_file` (`--config`) replaces `<data dir>/config.json` and must exist; `overrides` are
    CLI flags keyed like config.json (`host`, `port`, `data_dir`); `home` anchors `~` (default:
    `$HOME` from `environ`). Raises ConfigError naming the variable (or file) at fault.
    """
    home_dir = _home(environ, home)
    override_layer = _parse_layer(overrides or {}, lambda key: f"--{key.replace('_', '-')}")
    env_layer = _parse_layer(
        {key: environ[env_name(key)] for key in VARIABLES if env_name(key) in environ},
        env_name,
    )
    file_values: Mapping[str, object] = {}
    if config_file is not None:
        file_values = _read_config_file(config_file, must_exist=True)
    file_layer = _parse_layer(file_values, lambda key: f"{key} in {config_file}")

    data_dir = _data_dir(environ, override_layer, env_layer, file_layer, home_dir)
    if config_file is None:
        config_file = data_dir / C.CONFIG_FILE_NAME
        file_values = _read_config_file(config_file, must_exist=False)
        if "data_dir" in file_values:
            raise ConfigError(
                f"data_dir cannot be set in {config_file} (that file lives in the data dir); "
                "use LIVE_MEMORY_DATA_DIR or --data-dir"
            )
        file_layer = _parse_layer(file_values, lambda key: f"{key} in {config_file}")
    return _build(
        environ, {**file_layer, **env_layer, **override_layer}, data_dir, home_dir, config_file
    )


def write_config(
    path: Path,
    updates: Mapping[str, str],
    *,
    environ: Mapping[str, str] | None = None,
    home: Path | None = None,
) -> dict[str, object]:
    """Apply `KEY=VALUE` updates to the config file at `path`; return its new content.

    Keys are config.json keys (`port`) or variable names (`LIVE_MEMORY_PORT`); an empty value
    removes the key. The result is validated by loading it (with `environ`, default empty)
    before the file is replaced atomically, settings that only work together included (a
    public `host` needs a `token`). Raises ConfigError; the file is then untouched.
    """
    content: dict[str, object] = dict(_read_config_file(path, must_exist=False))
    for raw_key, value in updates.items():
        key = raw_key.strip().lower().removeprefix(C.ENV_PREFIX.lower())
        if key not in VARIABLES:
            raise ConfigError(f"unknown setting {raw_key!r}; known: {', '.join(VARIABLES)}")
        if key == "data_dir":
            raise ConfigError("data_dir cannot be set in config.json; use LIVE_MEMORY_DATA_DIR")
        if is_unset(value):
            content.pop(key, None)
            continue
        parsed = VARIABLES[key](value, key)
        content[key] = list(parsed) if isinstance(parsed, tuple) else parsed
    env = environ or {}
    home_dir = _home(env, home)
    env_layer = _parse_layer(
        {key: env[env_name(key)] for key in VARIABLES if env_name(key) in env}, env_name
    )
    file_layer = _parse_layer(content, lambda key: f"{key} in {path}")
    data_dir = _data_dir(env, {}, env_layer, file_layer, home_dir)
    settings = _build(env, {**file_layer, **env_layer}, data_dir, home_dir, path)
    check_exposure(settings)
    check_startable(settings)
    body = orjson.dumps(content, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
    _atomic_write(path, body)
    logger.info("wrote %s (%s)", path, ", ".join(sorted(updates)) or "no changes")
    return content


def config_file_values(path: Path) -> Mapping[str, object]:
    """The content of a config file (empty when it does not exist); raises ConfigError."""
    return _read_config_file(path, must_exist=False)


def config_items(settings: Settings) -> dict[str, object]:
    """Every setting as JSON-friendly values for `config get`, secrets masked."""
    items: dict[str, object] = {}
    for field in dataclasses.fields(settings):
        value = getattr(settings, field.name)
        if field.name in SECRET_KEYS and isinstance(value, str):
            value = _mask(value)
        elif isinstance(value, Path):
            value = str(value)
        elif isinstance(value, tuple):
            value = list(value)
        items[field.name] = value
    return items


def _mask(secret: str) -> str:
    if len(secret) < 16:
        return "****"
    return f"{secret[:4]}...{secret[-4:]}"


def _home(environ: Mapping[str, str], home: Path | None) -> Path:
    if home is not None:
        return home
    raw = environ.get("HOME", "").strip()
    return Path(raw) if raw else Path.home()


def _parse_layer(values: Mapping[str, object], label_of: Callable[[str], str]) -> _Layer:
    layer: _Layer = {}
    for key, raw in values.items():
        if key not in VARIABLES:
            raise ConfigError(f"unknown setting {key!r} ({label_of(key)})")
        value = str(raw) if isinstance(raw, Path) else raw
        if not is_unset(value):
            layer[key] = (VARIABLES[key](value, label_of(key)), label_of(key))
    return layer


def _read_config_file(path: Path, *, must_exist: bool) -> Mapping[str, object]:
    try:
        data = read_regular(path)  # a FIFO would hold up start-up, /reload and `config set`
    except FileNotFoundError as exc:
        if must_exist:
            raise ConfigError(f"config file {path} does not exist") from exc
        return {}
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        raise ConfigError(f"config file {path} cannot be read: {exc}") from exc
    if not data.strip():
        return {}
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise ConfigError(f"config file {path} is not valid JSON: {exc}") from exc
    if not isinstance(document, dict):
        raise ConfigError(f"config file {path} must hold a JSON object, got {type(document)}")
    for key in document:
        if key not in VARIABLES:
            raise ConfigError(f"config file {path} has an unknown key {key!r}")
    return document


def _anchor(raw: str, home: Path, base: Path | None, label: str) -> Path:
    path = Path(raw)
    if raw == "~" or raw.startswith("~/"):
        path = home / raw[2:]
    elif raw.startswith("~"):
        try:
            path = path.expanduser()
        except RuntimeError as exc:
            raise ConfigError(f"{label} names an unknown user's home: {raw}") from exc
    if path.is_absolute():
        return path
    if base is None:
        raise ConfigError(f"{label} must be an absolute path, got {raw}")
    return base / path


def _data_dir(
    environ: Mapping[str, str], overrides: _Layer, env: _Layer, file: _Layer, home: Path
) -> Path:
    if "data_dir" in overrides:
        raw, label = overrides["data_dir"]
        return _anchor(str(raw), home, Path.cwd(), label)  # a CLI flag is relative to its cwd
    for layer in (env, file):
        if "data_dir" in layer:
            raw, label = layer["data_dir"]
            return _anchor(str(raw), home, None, label)
    plugin_data = environ.get(C.DATA_DIR_ENV_FALLBACK, "")
    if not is_unset(plugin_data):
        raw = str(VARIABLES["data_dir"](plugin_data, C.DATA_DIR_ENV_FALLBACK))
        return _anchor(raw, home, None, C.DATA_DIR_ENV_FALLBACK)
    return _anchor(C.DEFAULT_DATA_DIR, home, None, f"the default data dir (HOME={home})")


def _build(
    environ: Mapping[str, str],
    merged: _Layer,
    data_dir: Path,
    home: Path,
    config_file: Path,
) -> Settings:
    values = {key: value for key, (value, _label) in merged.items()}

    def label(key: str) -> str:
        return merged[key][1] if key in merged else env_name(key)

    defaults = Settings()
    threshold = values.get("compaction_threshold", defaults.compaction_threshold)
    floor = values.get("compaction_floor", defaults.compaction_floor)
    assert isinstance(threshold, float) and isinstance(floor, float)
    if floor >= threshold:
        raise ConfigError(
            f"{label('compaction_floor')} ({floor:g}) must be below "
            f"{label('compaction_threshold')} ({threshold:g})"
        )
    if ("price_input" in values) != ("price_output" in values):
        given, missing = (
            ("price_input", "price_output")
            if "price_input" in values
            else ("price_output", "price_input")
        )
        raise ConfigError(
            f"{label(given)} is set but {env_name(missing)} is not: "
            "set both prices (input and output) or neither"
        )
    for key in PATH_KEYS - {"data_dir"}:
        if key in values:
            values[key] = _anchor(str(values[key]), home, data_dir, label(key))
    allowed = values.get("allowed_roots", ())
    assert isinstance(allowed, tuple)
    values["allowed_roots"] = tuple(
        os.path.realpath(_anchor(raw, home, None, label("allowed_roots"))) for raw in allowed
    )

    api_key = values.get("api_key")
    base_url = values.get("base_url")
    explicit = values.get("provider")
    use_subscription = values.get("use_subscription", defaults.use_subscription)
    choice = detect_provider(
        environ,
        explicit=explicit if isinstance(explicit, str) else None,
        api_key=api_key if isinstance(api_key, str) else None,
        api_key_source=label("api_key") if "api_key" in merged else None,
        base_url=base_url if isinstance(base_url, str) else None,
        use_subscription=bool(use_subscription),
        home=home,
    )
    model = values.get("model", choice.model)
    if model is None:
        model = {
            C.PROVIDER_ANTHROPIC: C.ANTHROPIC_DEFAULT_MODEL,
            C.PROVIDER_OPENAI: C.OPENAI_DEFAULT_MODEL,
        }.get(choice.provider or "", "")
    values.update(
        data_dir=data_dir,
        provider=choice.provider,
        base_url=choice.base_url,
        api_key=choice.api_key,
        api_key_source=choice.api_key_source,
        subscription=choice.subscription,
        credentials_file=choice.credentials_file,
        cloud=choice.cloud,
        provider_problem=choice.problem,
        model=model,
        summary_model=values.get("summary_model", model),
        config_file=config_file,
        timeout_explicit="default_timeout_s" in merged,
        home_dir=Path(os.path.realpath(home)),
    )
    kwargs: dict[str, Any] = values
    return Settings(**kwargs)


def _atomic_write(path: Path, data: bytes) -> None:
    try:
        write_atomically(path, data)
    except OSError as exc:
        raise ConfigError(f"config file {path} cannot be written: {exc.strerror or exc}") from exc
