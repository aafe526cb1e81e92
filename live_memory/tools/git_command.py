"""Running git read-only inside a workspace (see `live_memory.safe_git`: nothing the
repository configures is executed, and a command past its deadline dies with its children)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from live_memory.config.constants import TOOL_SUBPROCESS_TIMEOUT_S
from live_memory.errors import LiveMemoryError
from live_memory.safe_git import run_git_commands

__all__ = ["GitResult", "GitUnavailable", "run_git", "run_git_concurrently"]

logger = logging.getLogger(__name__)


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
    """Run `git <args>` with cwd=root, neutralised; never reads stdin.

    Raises GitUnavailable when git is missing or times out; a non-zero exit is a result.
    """
    return run_git_concurrently(root, [args], timeout=timeout)[0]


def run_git_concurrently(
    root: Path, commands: Sequence[Sequence[str]], *, timeout: float = TOOL_SUBPROCESS_TIMEOUT_S
) -> list[GitResult]:
    """Run several git commands at once (each one stats the work tree: overlap the waits).

    Results come back in order. Raises GitUnavailable when git is missing or any command
    times out (all of them are then killed, with their process groups), GitDirRefused when
    `root` is in no work tree or its git directory is another repository's.
    """
    try:
        runs = run_git_commands(root, commands, timeout=timeout)
    except FileNotFoundError as exc:
        raise GitUnavailable(str(exc)) from None
    except TimeoutError:
        raise GitUnavailable(f"git took longer than {timeout:.0f} s") from None
    except OSError as exc:
        raise GitUnavailable(f"git could not be started: {exc.strerror}") from None
    results = []
    for args, run in zip(commands, runs, strict=True):
        if run.returncode is None:
            raise GitUnavailable(f"git {args[0]} took longer than {timeout:.0f} s")
        stderr = run.stderr.decode("utf-8", errors="replace").strip()
        if run.returncode != 0:
            logger.debug("git %s exited %d: %s", args[0], run.returncode, stderr[:200])
        results.append(GitResult(run.returncode, run.stdout, stderr))
    return results
