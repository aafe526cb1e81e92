"""Running the few git plumbing commands the watcher needs (ignore checks, HEAD, diffs).

The watcher runs outside any request, so a failing or missing git is logged and reported
as None: the caller then carries on with less knowledge (nothing ignored, no HEAD diff).
"""

from __future__ import annotations

import logging
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from live_memory.config import constants as C

__all__ = ["GitOutput", "run_git"]

logger = logging.getLogger(__name__)

# Repository config can make git run programs (fsmonitor hooks); the watcher must not.
_SAFE_OPTIONS = ("--no-optional-locks", "-c", "core.fsmonitor=false", "-c", "core.quotepath=off")


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
    """Run `git <args>` in `root`; None when git is missing, failed to start or timed out."""
    git = shutil.which("git")
    if git is None:
        logger.warning("git is not installed; the watcher cannot consult the repository")
        return None
    try:
        done = subprocess.run(
            [git, *_SAFE_OPTIONS, *args],
            cwd=root,
            input=stdin if stdin is not None else b"",
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        logger.warning("git %s in %s took longer than %.0f s", args[0], root, timeout)
        return None
    except OSError as exc:
        logger.warning("git %s in %s could not run: %s", args[0], root, exc)
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
