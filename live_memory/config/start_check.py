"""What a start needs from this machine: the backend's optional package, and paths it can use.

Checked where a configuration is written (`config set`) and where it is about to be used
(`serve`), as `check_exposure` is, so `backend=ray` without the `ray` extra, or a log file
at `/proc/self/mem`, is refused before the file changes instead of failing the next start.
The backend's package is looked up (`importlib.util.find_spec`), never imported: importing
Ray takes seconds and starts threads.
"""

from __future__ import annotations

import importlib.util
import os
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from live_memory.config.settings import Settings
from live_memory.errors import ConfigError

__all__ = ["BACKEND_MODULES", "check_startable"]

BACKEND_MODULES: Final = {"ray": "ray"}
"""backend -> the module its extra (`pip install 'live-memory[<backend>]'`) installs."""
PSEUDO_FILE_SYSTEMS: Final = (Path("/proc"), Path("/sys"), Path("/dev"))
"""Where no setting's path may lead: kernel interfaces, not storage."""


def check_startable(
    settings: Settings, *, find_spec: Callable[[str], Any] = importlib.util.find_spec
) -> None:
    """Raise ConfigError, naming the variable, when a start with `settings` would fail: the
    backend's package is missing, or a path setting is not one the server can write."""
    module = BACKEND_MODULES.get(settings.backend)
    if module is not None and find_spec(module) is None:
        raise ConfigError(
            f"LIVE_MEMORY_BACKEND={settings.backend} needs the {module} package, which "
            f"{sys.executable} cannot import: pip install 'live-memory[{settings.backend}]'"
        )
    _check_path("LIVE_MEMORY_DATA_DIR", settings.data_dir, directory=True)
    if settings.insights_root is not None:
        _check_path("LIVE_MEMORY_INSIGHTS_ROOT", settings.insights_root, directory=True)
    if settings.log_file is not None:
        _check_path("LIVE_MEMORY_LOG_FILE", settings.log_file, directory=False)


def _check_path(variable: str, path: Path, *, directory: bool) -> None:
    """`path` (links resolved) is outside the pseudo file systems, is a directory or a
    regular file as asked when it exists, and can be written or created."""
    real = Path(os.path.realpath(path))
    kind = "a directory" if directory else "a regular file"
    if any(real == top or top in real.parents for top in PSEUDO_FILE_SYSTEMS):
        raise ConfigError(
            f"{variable} must be {kind} on a disk, not under /proc, /sys or /dev: {path}"
        )
    try:
        mode: int | None = os.stat(real).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise ConfigError(f"{variable} {path} cannot be examined: {exc.strerror or exc}") from exc
    if mode is not None:
        if not (stat.S_ISDIR(mode) if directory else stat.S_ISREG(mode)):
            raise ConfigError(f"{variable} must be {kind}, and {path} is not")
        if not os.access(real, os.W_OK):
            raise ConfigError(f"{variable} {path} is not writable")
        return
    existing = real.parent if not directory else real
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
        raise ConfigError(
            f"{variable} {path} cannot be created: {existing} is not a writable directory"
        )
