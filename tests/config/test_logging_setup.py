"""JSON-lines logging: file rotation, idempotent setup, quiet noisy libraries."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from live_memory.config import configure_logging, reset_logging
from live_memory.errors import ConfigError


@pytest.fixture(autouse=True)
def restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    level = root.level
    yield
    reset_logging()
    root.setLevel(level)


def ours() -> list[logging.Handler]:
    return [h for h in logging.getLogger().handlers if getattr(h, "_live_memory_handler", False)]


def test_lines_in_the_log_file_are_json_with_the_expected_fields(tmp_path: Path) -> None:
    log_file = tmp_path / "logs" / "live-memory.log"
    configure_logging("info", log_file)
    log = logging.getLogger("live_memory.test")
    log.info("hello %s", "world")
    log.debug("not shown at info")
    try:
        raise ValueError("boom")
    except ValueError:
        log.exception("it failed")
    for handler in ours():
        handler.flush()
    records = [orjson.loads(line) for line in log_file.read_text(encoding="utf-8").splitlines()]
    assert [r["message"] for r in records] == ["hello world", "it failed"]
    assert records[0]["level"] == "INFO"
    assert records[0]["logger"] == "live_memory.test"
    assert "ts" in records[0]
    assert "exc" not in records[0]
    assert "ValueError: boom" in records[1]["exc"]


def test_rotation_keeps_at_most_the_configured_backups(tmp_path: Path) -> None:
    log_file = tmp_path / "live-memory.log"
    configure_logging("info", log_file, max_bytes=300, backups=2)
    log = logging.getLogger("live_memory.rotation")
    for index in range(200):
        log.info("line %d %s", index, "x" * 40)
    for handler in ours():
        handler.flush()
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["live-memory.log", "live-memory.log.1", "live-memory.log.2"]
    for path in tmp_path.iterdir():
        for line in path.read_text(encoding="utf-8").splitlines():
            assert orjson.loads(line)["logger"] == "live_memory.rotation"


def test_configuring_twice_does_not_duplicate_handlers(tmp_path: Path) -> None:
    log_file = tmp_path / "live-memory.log"
    configure_logging("info", log_file)
    configure_logging("debug", log_file)
    assert len(ours()) == 2
    assert logging.getLogger().level == logging.DEBUG
    logging.getLogger("live_memory.twice").info("once")
    for handler in ours():
        handler.flush()
    assert len(log_file.read_text(encoding="utf-8").splitlines()) == 1
    configure_logging("warning", None)
    assert len(ours()) == 1


def test_noisy_libraries_are_held_to_warning(tmp_path: Path) -> None:
    configure_logging("debug", None)
    for name in ("httpx", "httpcore", "httpx2", "httpcore2", "mcp.server.streamable_http"):
        assert logging.getLogger(name).getEffectiveLevel() == logging.WARNING


def test_unknown_level_is_refused() -> None:
    with pytest.raises(ConfigError, match="LIVE_MEMORY_LOG_LEVEL"):
        configure_logging("chatty", None)


def test_unopenable_log_file_is_refused_by_name(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x", encoding="utf-8")
    with pytest.raises(ConfigError, match="LIVE_MEMORY_LOG_FILE cannot be opened"):
        configure_logging("info", blocker / "live-memory.log")
