"""The service's environment, resolved once: its env file on top of the login basics."""

from __future__ import annotations

from pathlib import Path

import pytest

from live_memory.config.service_env import (
    parse_env_file,
    service_env_file,
    service_environment,
    session_mismatch,
)
from live_memory.errors import ConfigError


def _write(home: Path, text: str) -> Path:
    path = service_env_file({"HOME": str(home)})
    path.parent.mkdir(parents=True)
    path.write_text(text)
    return path


def test_env_file_lines_as_systemd_reads_them() -> None:
    text = "# comment\n; another\n\nA=1\nexport B = two words \nC=\"quoted # kept\"\nD='x'\nE=\n"
    assert parse_env_file(text, "env") == {
        "A": "1",
        "B": "two words",
        "C": "quoted # kept",
        "D": "x",
        "E": "",
    }
    with pytest.raises(ConfigError, match=r"env:2: expected KEY=value"):
        parse_env_file("A=1\nnot a line\n", "env")


def test_the_callers_own_settings_do_not_leak_into_the_service(tmp_path: Path) -> None:
    _write(tmp_path, "LIVE_MEMORY_MODEL=service-model\n")
    caller = {
        "HOME": str(tmp_path),
        "PATH": "/usr/bin",
        "CLAUDE_PLUGIN_DATA": "/somewhere/plugin-data",
        "ANTHROPIC_API_KEY": "sk-ant-claude-code",
        "LIVE_MEMORY_MODEL": "claude-code-model",
    }
    assert service_environment(caller) == {
        "HOME": str(tmp_path),
        "PATH": "/usr/bin",
        "LIVE_MEMORY_MODEL": "service-model",
    }
    assert service_environment({"HOME": str(tmp_path / "nobody")}) == {
        "HOME": str(tmp_path / "nobody")
    }


def test_a_session_expecting_another_port_or_token_is_named(tmp_path: Path) -> None:
    caller = {"HOME": str(tmp_path)}
    assert session_mismatch(caller, {}) is None
    assert session_mismatch({**caller, "LIVE_MEMORY_HOST": "localhost"}, {}) is None
    assert session_mismatch(caller, {"LIVE_MEMORY_HOST": "0.0.0.0"}) is None
    port = session_mismatch({**caller, "LIVE_MEMORY_PORT": "7800"}, {})
    assert port is not None and "LIVE_MEMORY_PORT=7711" in port and "expects 7800" in port
    token = session_mismatch(caller, {"LIVE_MEMORY_TOKEN": "secret-one"})
    assert token is not None and "LIVE_MEMORY_TOKEN differs" in token
    assert "secret-one" not in token
