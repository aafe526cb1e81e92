"""Running git read-only inside a workspace.

Git reads repository config, and some config keys run programs (`core.fsmonitor`, external
diff drivers, textconv filters). The options here switch those off and stop `git status` from
rewriting the index, so exploring a repository never executes or mutates anything in it.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from live_memory.config.constants import TOOL_SUBPROCESS_TIMEOUT_S
from live_memory.errors import LiveMemoryError

__all__ = ["GitResult", "GitUnavailable", "run_git", "run_git_concurrently"]

logger = logging.getLogger(__name__)

_SAFE_OPTIONS = (
    "--no-optional-locks",  # status must not refresh (write) the index
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.quotepath=off",
    "-c",
    "color.ui=never",
    "-c",
    "diff.external=",
    "-c",
    "log.showSignature=false",
)


class GitUnavailable(LiveMemoryError):
    """git is not installed or did not finish in time; the message says which."""


@dataclass(frozen=True, slots=True)
class GitResult:
    returncode: int
    stdout: bytes
    stderr: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def run_git(
    root: Path, args: Sequence[str], *, timeout: float = TOOL_SUBPROCESS_TIMEOUT_S
) -> GitResult:
    """Run `git <args>` with cwd=root and the safety options; never reads stdin.

    Raises GitUnavailable when git is missing or times out; a non-zero exit is a result.
    """
    return run_git_concurrently(root, [args], timeout=timeout)[0]


def run_git_concurrently(
    root: Path, commands: Sequence[Sequence[str]], *, timeout: float = TOOL_SUBPROCESS_TIMEOUT_S
) -> list[GitResult]:
    """Run several git commands at once (each one stats the work tree: overlap the waits).

    Results come back in order. Raises GitUnavailable when git is missing or any command
    times out (all of them are then killed).
    """
    git = shutil.which("git")
    if git is None:
        raise GitUnavailable("git is not installed on the server")
    processes: list[subprocess.Popen[bytes]] = []
    try:
        for args in commands:
            processes.append(
                subprocess.Popen(
                    [git, *_SAFE_OPTIONS, *args],
                    cwd=root,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                )
            )
        deadline = time.monotonic() + timeout
        results = []
        for args, process in zip(commands, processes, strict=True):
            try:
                stdout, stderr_bytes = process.communicate(
                    timeout=max(deadline - time.monotonic(), 0)
                )
            except subprocess.TimeoutExpired:
                raise GitUnavailable(f"git {args[0]} took longer than {timeout:.0f} s") from None
            stderr = stderr_bytes.decode("utf-8", errors="replace").strip()
            if process.returncode != 0:
                logger.debug("git %s exited %d: %s", args[0], process.returncode, stderr[:200])
            results.append(GitResult(process.returncode, stdout, stderr))
        return results
    except OSError as exc:
        raise GitUnavailable(f"git could not be started: {exc.strerror}") from None
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()
            for stream in (process.stdout, process.stderr):
                if stream is not None:
                    stream.close()
