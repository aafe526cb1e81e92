"""How a CLI command ends: its exit code, and the error that carries a code and a message."""

from __future__ import annotations

from enum import IntEnum

from live_memory.errors import LiveMemoryError

__all__ = ["CommandFailed", "ExitCode"]


class ExitCode(IntEnum):
    """The CLI's exit codes; scripts may rely on them."""

    OK = 0
    FAILED = 1
    """The server answered with an error (4xx/5xx), or a local step failed."""
    USAGE = 2
    """Bad arguments or configuration; nothing was attempted."""
    SERVER_DOWN = 3
    """No server listens at the URL."""
    INTERRUPTED = 130
    """Ctrl-C (128 + SIGINT, as shells report it)."""


class CommandFailed(LiveMemoryError):
    """A command could not do its job; `main` prints the message and exits with the code."""

    def __init__(self, message: str, exit_code: ExitCode = ExitCode.FAILED) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code
