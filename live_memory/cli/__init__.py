"""The `live-memory` command line: `serve` runs the server, the other commands talk to it."""

from __future__ import annotations

from live_memory.cli.lock import ServeLock, ServeLockHeld
from live_memory.cli.main import main, run
from live_memory.cli.outcome import CommandFailed, ExitCode

__all__ = ["CommandFailed", "ExitCode", "ServeLock", "ServeLockHeld", "main", "run"]
