"""The Grep engine: ripgrep as it is, started where the jail opened the target.

ripgrep walks and honours ignore files itself (inside git and outside, `.ignore` too),
skips binary files and does not follow links; Grep adds only what is ours: `.git`
internals never searched (`-g !.git`, nested repositories' and submodules' too), the glob
narrowed for ripgrep (see `_narrowing`) and applied exactly afterwards, and no path
argument that the kernel could resolve through a swapped-in link: a directory is searched
with ripgrep's working directory set to the descriptor the jail opened, one file is fed on
standard input from its jailed descriptor.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import re
import shutil
import signal
import subprocess
import sysconfig
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from live_memory.config.constants import (
    BINARY_SNIFF_BYTES,
    GREP_BATCH_MAX_ARG_BYTES,
    NON_GIT_SKIP_DIRS,
)
from live_memory.tools.arguments import BadToolArguments
from live_memory.tools.grep_engine import FileHits, GrepQuery, GrepTarget, out_of_time
from live_memory.tools.jail import check_regular, open_in_root
from live_memory.tools.scope import Scope

__all__ = ["RipgrepEngine", "find_ripgrep"]

logger = logging.getLogger(__name__)

_BASE = ("--no-config", "--hidden", "--no-require-git", "--color=never", "--engine=auto")
_OUTPUT = ("--with-filename", "--null", "--no-messages")
_NOT_GIT = ("--glob=!.git",)
_OUTSIDE_GIT = tuple(f"--glob=!{name}/" for name in NON_GIT_SKIP_DIRS if name != ".git")
_STDIN = "<stdin>"
_RECORD = re.compile(rb"([^\0\n]*)\0(\d+)(?::|\n|$)")
# A name glob ripgrep's own glob syntax reads exactly as ours: nothing else is narrowed.
_PLAIN_NAME_GLOB = re.compile(r"[\w.*?-]*(?:\{[\w.*?,-]*\}[\w.*?-]*)?")
_REGEX_ERRORS = ("regex parse error", "error parsing regex", "PCRE2", "unrecognized")


def find_ripgrep() -> str | None:
    """The rg binary: the one installed next to this interpreter's scripts, then PATH."""
    scripts = sysconfig.get_path("scripts")
    for candidate in (os.path.join(scripts, "rg") if scripts else "", shutil.which("rg") or ""):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


class RipgrepEngine:
    """Runs `rg`; stateless, so threads may share it."""

    name = "ripgrep"

    def __init__(self, binary: str) -> None:
        self._binary = binary

    def search(
        self, scope: Scope, query: GrepQuery, target: GrepTarget, deadline: float
    ) -> dict[str, FileHits]:
        mode = "--files-with-matches" if query.mode == "files_with_matches" else "--count"
        if target.is_file:  # on stdin from the jailed descriptor: searched even if ignored
            opened = open_in_root(scope.root, target.rel, secret_patterns=scope.secret_patterns)
            check_regular(opened.fd, target.rel)  # a FIFO on stdin would just read as empty
            if b"\0" in os.pread(opened.fd, BINARY_SNIFF_BYTES, 0):  # binary, as rg's walk says
                os.close(opened.fd)
                return {}
            args, prefix, cwd_fd, stdin_fd = [mode, "--", query.pattern, "-"], "", None, opened.fd
        else:
            opened = open_in_root(scope.root, target.rel, directory=True, secret_patterns=())
            args = [mode, *_walk_flags(scope.root), *_narrowing(target), "--", query.pattern]
            prefix = f"{target.rel}/" if target.rel else ""
            cwd_fd, stdin_fd = opened.fd, None
        try:
            out = self._run(args, query, deadline, cwd_fd=cwd_fd, stdin_fd=stdin_fd)
        finally:
            os.close(opened.fd)
        found = _parse(out, query, prefix)
        if target.is_file:
            return {target.rel: found[_STDIN]} if _STDIN in found else {}
        if target.glob is None:
            return found
        return {rel: hits for rel, hits in found.items() if target.selects(rel)}

    def line_numbers(
        self, scope: Scope, query: GrepQuery, files: Sequence[str], deadline: float
    ) -> dict[str, tuple[int, ...]]:
        """The first `per_file_cap` matching line numbers of each file (content mode).

        Named by path under the root's descriptor: a path raced to lead elsewhere only
        yields numbers, and the lines shown are read back through the jail.
        """
        numbers: dict[str, list[int]] = {}
        opened = open_in_root(scope.root, "", directory=True, secret_patterns=())
        try:
            for batch in _batches(files):
                args = ["--line-number", "--no-heading", "--max-columns=1", "--no-ignore"]
                args += [f"--max-count={query.per_file_cap}", "--", query.pattern, *batch]
                for path, number in _RECORD.findall(
                    self._run(args, query, deadline, cwd_fd=opened.fd)
                ):
                    numbers.setdefault(os.fsdecode(path), []).append(int(number))
        finally:
            os.close(opened.fd)
        return {path: tuple(sorted(found)) for path, found in numbers.items()}

    def _run(
        self,
        args: Sequence[str],
        query: GrepQuery,
        deadline: float,
        *,
        cwd_fd: int | None = None,
        stdin_fd: int | None = None,
    ) -> bytes:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise out_of_time()
        case = "--ignore-case" if query.ignore_case else "--case-sensitive"
        # stdout to a file, not a pipe: draining a pipe record by record costs more CPU than
        # the search it competes with.
        with tempfile.TemporaryFile() as stdout, tempfile.TemporaryFile() as stderr:
            process = subprocess.Popen(
                [self._binary, *_BASE, *_OUTPUT, case, *args],
                # In the child, /proc/self/fd/N is the directory the jail opened.
                cwd=f"/proc/self/fd/{cwd_fd}" if cwd_fd is not None else None,
                pass_fds=(cwd_fd,) if cwd_fd is not None else (),
                stdin=stdin_fd if stdin_fd is not None else subprocess.DEVNULL,
                stdout=stdout,
                stderr=stderr,
                start_new_session=True,
            )
            # A timer kills at the deadline; a blocking wait wakes the moment rg exits
            # (`wait(timeout=...)` polls with sleeps of up to 50 ms).
            expired = threading.Event()
            timer = threading.Timer(remaining, _kill, (process, expired))
            timer.start()
            try:
                returncode = process.wait()
            finally:
                timer.cancel()
            if expired.is_set():
                raise out_of_time()
            stdout.seek(0)
            stderr.seek(0)
            out, err = stdout.read(), stderr.read()
        if (
            returncode == 2
            and not out
            and any(m in err.decode(errors="replace") for m in _REGEX_ERRORS)
        ):
            raise BadToolArguments(f"Grep: invalid regex {query.pattern!r}: {_error(err)}")
        return out


def _kill(process: subprocess.Popen[bytes], expired: threading.Event) -> None:
    expired.set()
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)  # not yet reaped: the group id is still its own


def _walk_flags(root: Path) -> tuple[str, ...]:
    return _NOT_GIT if _inside_git(str(root)) else (*_NOT_GIT, *_OUTSIDE_GIT)


@functools.lru_cache(maxsize=256)
def _inside_git(root: str) -> bool:
    """Outside git the listing skips `node_modules` and the like: so does the walk."""
    path = Path(root)
    return any(os.path.lexists(directory / ".git") for directory in (path, *path.parents))


def _narrowing(target: GrepTarget) -> list[str]:
    """Flags that make ripgrep search fewer files than the glob would keep (never fewer).

    Not `--glob`: ripgrep lets a glob override ignore rules. A file-type glob does not, and
    a type is matched against the file name, so the glob's last segment narrows the walk
    when it names files (`*.py`, `src/**/test_*.{ts,tsx}`); the exact test comes after.
    """
    if target.glob is None:
        return []
    last = target.glob.pattern.strip().rstrip("/").rpartition("/")[2]
    if "{" in target.glob.pattern.rpartition("/")[0] or "**" in last:
        return []  # a brace spanning segments, or `**`: the last segment is not the name
    if not last or not _PLAIN_NAME_GLOB.fullmatch(last):
        return []
    if target.exclude:
        # Only a name glob can be excluded by type: a path glob excludes by path.
        if "/" in target.glob.pattern.strip().strip("/"):
            return []
        return [f"--type-add=lmglob:{last}", "--type-not=lmglob"]
    return [f"--type-add=lmglob:{last}", "--type=lmglob"]


def _parse(out: bytes, query: GrepQuery, prefix: str) -> dict[str, FileHits]:
    if query.mode == "files_with_matches":
        paths = out.decode("utf-8", "surrogateescape").split("\0")  # as os.fsdecode
        paths.pop()  # after the last NUL
        if prefix:
            paths = [prefix + path for path in paths]
        return dict.fromkeys(paths, FileHits(count=1))
    shared: dict[bytes, FileHits] = {}
    found: dict[str, FileHits] = {}
    for path, count in _RECORD.findall(out):
        hits = shared.get(count)
        if hits is None:
            hits = shared[count] = FileHits(count=int(count))
        found[prefix + os.fsdecode(path)] = hits
    return found


def _batches(files: Sequence[str]) -> list[list[str]]:
    """Runs of paths whose command-line size stays under the argument limit."""
    batches: list[list[str]] = [[]]
    size = 0
    for rel in files:
        cost = len(os.fsencode(rel)) + 9  # NUL and argv pointer
        if batches[-1] and size + cost > GREP_BATCH_MAX_ARG_BYTES:
            batches.append([])
            size = 0
        batches[-1].append(rel)
        size += cost
    return [batch for batch in batches if batch]


def _error(stderr: bytes) -> str:
    # rg explains a bad regex over several lines, the reason last ("error: unclosed group").
    lines = stderr.decode("utf-8", errors="replace").splitlines()
    reasons = [line for line in lines if line.startswith("error:")]
    return reasons[-1] if reasons else " ".join(lines[:4])
