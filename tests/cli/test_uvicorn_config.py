"""What uvicorn runs per request besides our app: no access-log line and no proxy-header
middleware unless asked for (a hook opens one connection per file event)."""

from __future__ import annotations

from pathlib import Path

import pytest
import uvicorn
from starlette.applications import Starlette

from live_memory.cli.serve import uvicorn_config
from live_memory.config import load_settings


def _config(tmp_path: Path, level: str) -> uvicorn.Config:
    settings = load_settings(
        {"LIVE_MEMORY_LOG_LEVEL": level}, overrides={"data_dir": tmp_path}, home=tmp_path
    )
    return uvicorn_config(Starlette(), settings)


@pytest.mark.parametrize(
    ("level", "logged"), [("INFO", False), ("WARNING", False), ("debug", True)]
)
def test_requests_are_access_logged_only_at_debug(tmp_path: Path, level: str, logged: bool) -> None:
    config = _config(tmp_path, level)

    assert config.access_log is logged


def test_forwarded_headers_are_never_trusted(tmp_path: Path) -> None:
    config = _config(tmp_path, "INFO")

    assert config.proxy_headers is False
    assert config.server_header is False
