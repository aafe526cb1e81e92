"""Process logging: JSON lines on stderr (journald-friendly) and an optional rotating file.

Reconfiguring (start-up, then every `/reload`) replaces the handlers this module installed and
leaves everyone else's (pytest's capture, an embedding application's) alone.
"""

from __future__ import annotations

import logging
import logging.handlers
import sys
from datetime import UTC, datetime
from pathlib import Path

import orjson

from live_memory.config import constants as C
from live_memory.errors import ConfigError

__all__ = ["JsonLineFormatter", "configure_logging", "reset_logging"]

logger = logging.getLogger(__name__)

_MARK = "_live_memory_handler"


class JsonLineFormatter(logging.Formatter):
    """One JSON object per line: ts, level, logger, message and, when present, exc."""

    def format(self, record: logging.LogRecord) -> str:
        document: dict[str, object] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            document["exc"] = self.formatException(record.exc_info)
        elif record.exc_text:
            document["exc"] = record.exc_text
        if record.stack_info:
            document["stack"] = self.formatStack(record.stack_info)
        return orjson.dumps(document, default=str).decode()


def configure_logging(
    level: str,
    log_file: Path | None,
    *,
    max_bytes: int = C.LOG_MAX_BYTES,
    backups: int = C.LOG_BACKUP_COUNT,
) -> None:
    """Install the stderr handler and, with `log_file`, a rotating file handler on the root.

    Idempotent: calling it again replaces the handlers it installed before. Raises ConfigError
    for an unknown level or a log file that cannot be opened.
    """
    numeric = logging.getLevelName(level.strip().upper())
    if not isinstance(numeric, int):
        raise ConfigError(f"LIVE_MEMORY_LOG_LEVEL must be a logging level, got {level!r}")
    if max_bytes < 1 or backups < 1:
        raise ValueError("log rotation needs max_bytes >= 1 and backups >= 1")
    formatter = JsonLineFormatter()
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if log_file is not None:
        try:
            log_file.parent.mkdir(parents=True, exist_ok=True)
            handlers.append(
                logging.handlers.RotatingFileHandler(
                    log_file, maxBytes=max_bytes, backupCount=backups, encoding="utf-8"
                )
            )
        except OSError as exc:
            raise ConfigError(
                f"LIVE_MEMORY_LOG_FILE cannot be opened: {log_file} ({exc.strerror or exc})"
            ) from exc
    reset_logging()
    root = logging.getLogger()
    for handler in handlers:
        handler.setFormatter(formatter)
        setattr(handler, _MARK, True)
        root.addHandler(handler)
    root.setLevel(numeric)
    for name in C.NOISY_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)


def reset_logging() -> None:
    """Remove (and close) the handlers `configure_logging` installed."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        if getattr(handler, _MARK, False):
            root.removeHandler(handler)
            handler.close()
