"""What a start needs from the machine, checked before a configuration is written or used."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from live_memory.config import check_startable, load_settings
from live_memory.errors import ConfigError
from tests.cli.conftest import clean_env
from tests.support.server_process import free_port


def test_a_backend_whose_package_cannot_be_found_is_refused_naming_the_extra(
    tmp_path: Path,
) -> None:
    settings = load_settings(
        {"LIVE_MEMORY_DATA_DIR": str(tmp_path / "data"), "LIVE_MEMORY_BACKEND": "ray"},
        home=tmp_path,
    )
    looked_up: list[str] = []

    def missing(name: str) -> None:
        looked_up.append(name)

    with pytest.raises(ConfigError, match=r"LIVE_MEMORY_BACKEND=ray needs the ray package"):
        check_startable(settings, find_spec=missing)
    assert looked_up == ["ray"]
    check_startable(load_settings({"LIVE_MEMORY_DATA_DIR": str(tmp_path)}, home=tmp_path))


@pytest.mark.parametrize(
    ("variable", "where"),
    [
        ("LIVE_MEMORY_DATA_DIR", "/proc/self"),
        ("LIVE_MEMORY_INSIGHTS_ROOT", "{tmp}/a-file"),
        ("LIVE_MEMORY_LOG_FILE", "/dev/null"),
        ("LIVE_MEMORY_LOG_FILE", "{tmp}/a-file/under-a-file.log"),
    ],
)
def test_unusable_paths_are_refused_naming_the_variable(
    tmp_path: Path, variable: str, where: str
) -> None:
    (tmp_path / "a-file").write_text("x")
    env = {"LIVE_MEMORY_DATA_DIR": str(tmp_path / "data"), variable: where.format(tmp=tmp_path)}
    with pytest.raises(ConfigError, match=variable):
        check_startable(load_settings(env, home=tmp_path))


def test_serve_refuses_a_log_file_under_proc_before_starting(tmp_path: Path) -> None:
    env = clean_env(
        tmp_path, LIVE_MEMORY_DATA_DIR=str(tmp_path / "data"), LIVE_MEMORY_LOG_FILE="/proc/self/mem"
    )
    argv = [sys.executable, "-m", "live_memory.cli", "serve", "--port", str(free_port())]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2
    assert "LIVE_MEMORY_LOG_FILE" in done.stderr and "/proc" in done.stderr
