"""Layering (overrides > environment > config.json > defaults), config files and `config set`."""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from live_memory.config import config_items, load_settings, write_config
from live_memory.config.variables import VARIABLES
from live_memory.errors import ConfigError
from tests.support.fifo import plant_fifo, without_blocking


def write_json(path: Path, content: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(content), encoding="utf-8")
    return path


def env_for(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {"HOME": str(tmp_path / "home"), "LIVE_MEMORY_DATA_DIR": str(tmp_path / "data"), **extra}


def test_config_json_in_data_dir_overrides_defaults(tmp_path: Path) -> None:
    write_json(tmp_path / "data" / "config.json", {"port": 9000, "keep_warm": "true"})
    settings = load_settings(env_for(tmp_path))
    assert settings.port == 9000
    assert settings.keep_warm is True
    assert settings.config_file == tmp_path / "data" / "config.json"


def test_environment_overrides_config_json(tmp_path: Path) -> None:
    write_json(tmp_path / "data" / "config.json", {"port": 9000, "keep_warm": True})
    settings = load_settings(env_for(tmp_path, LIVE_MEMORY_PORT="9100", LIVE_MEMORY_KEEP_WARM="0"))
    assert settings.port == 9100
    assert settings.keep_warm is False


def test_cli_overrides_win_over_environment(tmp_path: Path) -> None:
    settings = load_settings(
        env_for(tmp_path, LIVE_MEMORY_PORT="9100", LIVE_MEMORY_HOST="0.0.0.0"),
        overrides={"port": 9200, "host": "localhost", "data_dir": tmp_path / "cli-data"},
    )
    assert (settings.host, settings.port) == ("localhost", 9200)
    assert settings.data_dir == tmp_path / "cli-data"


def test_none_override_leaves_lower_layers_in_place(tmp_path: Path) -> None:
    settings = load_settings(env_for(tmp_path, LIVE_MEMORY_PORT="9100"), overrides={"port": None})
    assert settings.port == 9100


def test_invalid_override_names_the_flag(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--port must be 1-65535, got 0"):
        load_settings(env_for(tmp_path), overrides={"port": 0})


def test_config_json_lists_and_numbers_are_accepted(tmp_path: Path) -> None:
    write_json(
        tmp_path / "data" / "config.json",
        {"preload_globs": ["docs/*.md", "README.md"], "compaction_threshold": 0.9, "token": None},
    )
    settings = load_settings(env_for(tmp_path))
    assert settings.preload_globs == ("docs/*.md", "README.md")
    assert settings.compaction_threshold == 0.9
    assert settings.token is None


def test_bad_config_json_value_names_key_and_file(tmp_path: Path) -> None:
    path = write_json(tmp_path / "data" / "config.json", {"port": 0})
    with pytest.raises(ConfigError, match=re.escape(f"port in {path} must be 1-65535, got 0")):
        load_settings(env_for(tmp_path))


def test_bad_config_json_value_is_refused_even_when_environment_overrides_it(
    tmp_path: Path,
) -> None:
    write_json(tmp_path / "data" / "config.json", {"port": "nope"})
    with pytest.raises(ConfigError, match="port in"):
        load_settings(env_for(tmp_path, LIVE_MEMORY_PORT="9000"))


def test_malformed_config_json_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "data" / "config.json"
    path.parent.mkdir(parents=True)
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(ConfigError, match=re.escape(f"config file {path} is not valid JSON")):
        load_settings(env_for(tmp_path))


def test_config_json_that_is_not_an_object_is_refused(tmp_path: Path) -> None:
    path = write_json(tmp_path / "data" / "config.json", ["port", 1])
    with pytest.raises(ConfigError, match=re.escape(f"config file {path} must hold a JSON object")):
        load_settings(env_for(tmp_path))


def test_unknown_config_json_key_is_named(tmp_path: Path) -> None:
    write_json(tmp_path / "data" / "config.json", {"prot": 1})
    with pytest.raises(ConfigError, match="unknown key 'prot'"):
        load_settings(env_for(tmp_path))


def test_data_dir_inside_the_data_dir_config_is_refused(tmp_path: Path) -> None:
    write_json(tmp_path / "data" / "config.json", {"data_dir": str(tmp_path / "elsewhere")})
    with pytest.raises(ConfigError, match="data_dir cannot be set"):
        load_settings(env_for(tmp_path))


def test_explicit_config_file_replaces_data_dir_config_and_may_set_data_dir(
    tmp_path: Path,
) -> None:
    write_json(tmp_path / "data" / "config.json", {"port": 9000})
    explicit = write_json(
        tmp_path / "etc" / "lm.json", {"port": 9300, "data_dir": str(tmp_path / "d2")}
    )
    settings = load_settings({"HOME": str(tmp_path / "home")}, config_file=explicit)
    assert settings.port == 9300
    assert settings.data_dir == tmp_path / "d2"
    assert settings.config_file == explicit


def test_missing_explicit_config_file_is_refused(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    with pytest.raises(ConfigError, match=re.escape(f"config file {missing} does not exist")):
        load_settings(env_for(tmp_path), config_file=missing)


def test_data_dir_falls_back_to_plugin_data_then_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    plugin = load_settings({"CLAUDE_PLUGIN_DATA": str(tmp_path / "plugin")}, home=home)
    assert plugin.data_dir == tmp_path / "plugin"
    default = load_settings({}, home=home)
    assert default.data_dir == home / ".local" / "share" / "live-memory"
    explicit = load_settings(
        {"CLAUDE_PLUGIN_DATA": str(tmp_path / "plugin"), "LIVE_MEMORY_DATA_DIR": "~/lm"},
        home=home,
    )
    assert explicit.data_dir == home / "lm"


def test_write_config_validates_normalises_and_writes(tmp_path: Path) -> None:
    path = write_json(tmp_path / "data" / "config.json", {"model": "old-model"})
    content = write_config(
        path,
        {"port": "9400", "LIVE_MEMORY_KEEP_WARM": "yes", "preload_globs": "a.md,b.md", "model": ""},
    )
    assert content == {"port": 9400, "keep_warm": True, "preload_globs": ["a.md", "b.md"]}
    assert orjson.loads(path.read_bytes()) == content
    assert load_settings(env_for(tmp_path)).port == 9400
    assert [p.name for p in path.parent.iterdir()] == ["config.json"]


def test_write_config_refuses_invalid_value_and_leaves_file_untouched(tmp_path: Path) -> None:
    path = write_json(tmp_path / "data" / "config.json", {"port": 9000})
    before = path.read_bytes()
    with pytest.raises(ConfigError, match="port must be 1-65535, got 70000"):
        write_config(path, {"port": "70000"})
    with pytest.raises(ConfigError, match="compaction_floor"):
        write_config(path, {"compaction_floor": "0.95"})
    with pytest.raises(ConfigError, match="unknown setting 'colour'"):
        write_config(path, {"colour": "blue"})
    assert path.read_bytes() == before


def test_write_config_creates_a_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "fresh" / "config.json"
    assert write_config(path, {"model": "gpt-5-mini"}) == {"model": "gpt-5-mini"}
    assert path.is_file()


def test_config_items_masks_the_key_and_token(tmp_path: Path) -> None:
    settings = load_settings(
        env_for(
            tmp_path,
            LIVE_MEMORY_API_KEY="sk-ant-api03-abcdefghijklmnopqrstuvwxyz",
            LIVE_MEMORY_TOKEN="short",
        )
    )
    items = config_items(settings)
    assert items["api_key"] == "sk-a...wxyz"
    assert items["token"] == "****"
    assert items["data_dir"] == str(tmp_path / "data")
    assert items["preload_globs"] == []
    assert "abcdefghijklmnop" not in orjson.dumps(items).decode()


json_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=6,
)
config_keys = st.sampled_from(sorted(set(VARIABLES) - {"data_dir"})) | st.text(max_size=10)


@settings(max_examples=150, deadline=None)
@given(
    content=st.dictionaries(config_keys, json_values, max_size=6),
    env=st.dictionaries(
        st.sampled_from(sorted(f"LIVE_MEMORY_{key.upper()}" for key in VARIABLES)),
        st.text(alphabet=st.characters(exclude_characters="\x00"), max_size=12),
        max_size=6,
    ),
)
def test_random_config_and_environment_only_ever_raise_config_error(
    content: dict[str, object], env: dict[str, str]
) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        env = {**env, "LIVE_MEMORY_DATA_DIR": str(root / "data")}
        (root / "data").mkdir()
        (root / "data" / "config.json").write_text(json.dumps(content), encoding="utf-8")
        try:
            settings = load_settings(env, home=root / "home")
        except ConfigError:
            return
        assert settings.compaction_floor < settings.compaction_threshold
        assert 1 <= settings.port <= 65535


def test_a_config_file_that_is_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = plant_fifo(tmp_path / "data" / "config.json")
    with pytest.raises(ConfigError, match="not a regular file"):
        without_blocking(lambda: load_settings(env_for(tmp_path)), fifo)
