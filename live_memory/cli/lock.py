"""The singleton lock: one `live-memory serve` per port and data directory.

An exclusive `flock` on `<data_dir>/serve-<port>.lock`, held for the life of the process. The
kernel drops it when the process dies however it dies, so a crash never leaves a stale lock;
the pid written into the file is only for the message a second server prints.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from live_memory.cli.outcome import CommandFailed, ExitCode
from live_memory.config import constants as C

__all__ = ["ServeLock", "ServeLockHeld", "lock_path"]


class ServeLockHeld(CommandFailed):
    """Another process already holds the lock for this port."""

    def __init__(self, port: int, pid: int | None, path: Path) -> None:
        who = f"pid {pid}" if pid is not None else "pid unknown"
        super().__init__(
            f"another live-memory server already holds port {port} ({who}); lock file {path}",
            ExitCode.FAILED,
        )
        self.port = port
        self.pid = pid
        self.path = path


def lock_path(data_dir: Path, port: int) -> Path:
    return data_dir / C.LOCK_FILE_NAME.format(port=port)


class ServeLock:
    """The held lock; `release()` (or process exit) gives it back."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, data_dir: Path, port: int) -> ServeLock:
        """Take the lock at once or raise ServeLockHeld; never waits.

        Raises OSError when the data directory cannot be created or written.
        """
        data_dir.mkdir(parents=True, exist_ok=True)
        path = lock_path(data_dir, port)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = _read_pid(fd)
            os.close(fd)
            raise ServeLockHeld(port, pid, path) from None
        except BaseException:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        return cls(path, fd)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        # Truncate first so a reader never sees our pid after we let go.
        os.ftruncate(fd, 0)
        os.close(fd)

    def __enter__(self) -> ServeLock:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", errors="replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None
