"""Running `rg`: the flags every Grep search shares, the process, its errors and deadline."""

from __future__ import annotations

import logging
import os
import select
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from live_memory.config.constants import (
    GREP_BATCH_MAX_ARG_BYTES,
    GREP_MAX_FILE_BYTES,
    NON_GIT_SKIP_DIRS,
)
from live_memory.tools.arguments import BadToolArguments
from live_memory.tools.grep_engine import GrepMode, GrepQuery

__all__ = ["NAMED_FLAGS", "RipgrepOutput", "batches", "mode_flags", "run_ripgrep", "walk_flags"]

logger = logging.getLogger(__name__)

# --no-config: a user's RIPGREP_CONFIG_PATH must not change answers. --encoding=none: no BOM
# sniffing, so a UTF-16 file stays binary and NUL offsets are file offsets, as in Python.
# --engine=auto: look-around and back-references (valid in Python's `re`) switch to PCRE2.
_BASE_FLAGS = (
    "--no-config",
    "--hidden",
    "--color=never",
    "--engine=auto",
    "--encoding=none",
    "--with-filename",
    "--null",
)
# A walk: `.git` never searched, `.ignore`/`.rgignore` (which git ignores) not read, and the
# debug log that says what was skipped (see ripgrep_output).
_WALK_FLAGS = (
    f"--max-filesize={GREP_MAX_FILE_BYTES}",
    "--glob=!.git",
    "--no-ignore-dot",
    "--debug",
)
# Outside git our own walk reads only the `.gitignore` files below the root.
_OUTSIDE_GIT_FLAGS = (
    "--no-require-git",
    "--no-ignore-parent",
    "--no-ignore-global",
    "--no-ignore-exclude",
    *(f"--glob=!{name}/" for name in NON_GIT_SKIP_DIRS if name != ".git"),
)
# Files named on the command line were vetted already (regular, inside, not binary).
NAMED_FLAGS = ("--no-ignore", "--text")
_REGEX_ERROR_MARKERS = ("regex parse error", "error parsing regex", "PCRE2", "unrecognized")
_DEBUG_PREFIX = "rg: DEBUG|"
_OUT_OF_TIME = "the search ran out of time; narrow the path, glob or pattern"


@dataclass(frozen=True, slots=True)
class RipgrepOutput:
    stdout: bytes
    stderr: bytes


def walk_flags(*, in_git: bool) -> tuple[str, ...]:
    """Flags for a walk of the workspace, with git's ignore sources or our walk's."""
    return _WALK_FLAGS if in_git else (*_WALK_FLAGS, *_OUTSIDE_GIT_FLAGS)


def mode_flags(query: GrepQuery, mode: GrepMode) -> list[str]:
    flags = ["--ignore-case" if query.ignore_case else "--case-sensitive"]
    if mode == "files_with_matches":
        flags.append("--files-with-matches")
    elif mode == "count":
        flags.append("--count")
    else:
        # Only line numbers are used (lines are re-read and redacted), so rg may drop the text.
        flags += ["--line-number", "--no-heading", "--max-columns=1"]
        flags.append(f"--max-count={query.per_file_cap}")
    return flags


def run_ripgrep(
    binary: str, root: Path, args: Sequence[str], *, pattern: str, deadline: float
) -> RipgrepOutput:
    """Run rg with cwd=root to completion.

    Raises BadToolArguments for an invalid `pattern` and TimeoutError past `deadline`.
    """
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise TimeoutError(_OUT_OF_TIME)
    # Output goes to temporary files, not pipes: rg writes one small record per file, and
    # draining a pipe record by record costs more CPU than the search it competes with.
    with tempfile.TemporaryFile() as stdout, tempfile.TemporaryFile() as stderr:
        process = subprocess.Popen(
            [binary, *_BASE_FLAGS, *args],
            cwd=root,
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
        )
        returncode = _wait(process, remaining)
        if returncode is None:
            raise TimeoutError(_OUT_OF_TIME)
        stdout.seek(0)
        stderr.seek(0)
        output = RipgrepOutput(stdout.read(), stderr.read())
    if returncode == 2:
        errors = _errors(output.stderr)
        if not output.stdout and any(marker in errors for marker in _REGEX_ERROR_MARKERS):
            raise BadToolArguments(f"Grep: invalid regex {pattern!r}: {_first_lines(errors)}")
        logger.debug("rg reported: %s", _first_lines(errors))
    return output


def _wait(process: subprocess.Popen[bytes], timeout: float) -> int | None:
    """The exit status, or None after killing the process at `timeout` seconds.

    Wakes the moment the process exits: on Linux a pidfd is polled; elsewhere a timer thread
    kills the process (`Popen.wait(timeout=...)` would poll with sleeps of up to 50 ms).
    """
    if hasattr(os, "pidfd_open"):
        try:
            pidfd = os.pidfd_open(process.pid)
        except OSError:
            pidfd = -1
        if pidfd >= 0:
            try:
                poller = select.poll()
                poller.register(pidfd, select.POLLIN)
                exited = bool(poller.poll(max(timeout, 0.0) * 1000))
            finally:
                os.close(pidfd)
            if not exited:
                process.kill()
                process.wait()
                return None
            return process.wait()
    expired = threading.Event()

    def expire() -> None:
        expired.set()
        process.kill()

    timer = threading.Timer(timeout, expire)
    timer.start()
    try:
        returncode = process.wait()
    finally:
        timer.cancel()
    return None if expired.is_set() else returncode


def batches(files: Sequence[str]) -> Iterator[list[str]]:
    """Consecutive runs of paths whose command-line size stays under the rg argument limit."""
    batch: list[str] = []
    size = 0
    for rel in files:
        cost = len(rel.encode("utf-8", "surrogateescape")) + 9  # NUL and argv pointer
        if batch and size + cost > GREP_BATCH_MAX_ARG_BYTES:
            yield batch
            batch, size = [], 0
        batch.append(rel)
        size += cost
    if batch:
        yield batch


def _errors(stderr: bytes) -> str:
    text = stderr.decode("utf-8", errors="replace")
    return "\n".join(line for line in text.splitlines() if not line.startswith(_DEBUG_PREFIX))


def _first_lines(text: str, count: int = 4) -> str:
    # rg explains a bad regex over several lines, the reason last ("error: unclosed group").
    reasons = [line for line in text.splitlines() if line.startswith("error:")]
    if reasons:
        return reasons[-1]
    return " ".join(text.splitlines()[:count])
