"""Running the few git plumbing commands the watcher needs (ignore checks, HEAD, diffs).

The watcher runs outside any request, so a failing or missing git is logged and reported
as None: the caller then carries on with less knowledge (nothing ignored, no HEAD diff).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from live_memory.config import constants as C
from live_memory.errors import GitDirRefused
from live_memory.safe_git import run_git_commands

__all__ = ["GitOutput", "run_git"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class GitOutput:
    returncode: int
    stdout: bytes

    def paths(self) -> list[str]:
        """The NUL-separated paths of a `-z` listing."""
        return [p for p in self.stdout.decode("utf-8", "surrogateescape").split("\0") if p]


def run_git(
    root: Path,
    args: Sequence[str],
    *,
    stdin: bytes | None = None,
    timeout: float = C.WATCH_GIT_TIMEOUT_S,
) -> GitOutput | None:
    """Run `git <args>` in `root`; None when git is missing, failed to start or timed out.

    Neutralised like every git call (`live_memory.safe_git`): nothing the repository
    configures runs, and a command past `timeout` is killed with its process group.
    """
    try:
        done = run_git_commands(root, [args], timeout=timeout, stdin=stdin)[0]
    except FileNotFoundError:
        logger.warning("git is not installed; the watcher cannot consult the repository")
        return None
    except (OSError, TimeoutError) as exc:
        logger.warning("git %s in %s could not run: %s", args[0], root, exc)
        return None
    except GitDirRefused as exc:  # safe_git logged a foreign git directory already
        logger.debug("git %s in %s not run: %s", args[0], root, exc)
        return None
    if done.returncode is None:
        logger.warning("git %s in %s took longer than %.0f s", args[0], root, timeout)
        return None
    if done.returncode not in (0, 1):
        logger.debug(
            "git %s in %s exited %d: %s",
            args[0],
            root,
            done.returncode,
            done.stderr.decode("utf-8", "replace").strip()[:200],
        )
    return GitOutput(done.returncode, done.stdout)
