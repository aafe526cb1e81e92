"""Grep on ripgrep as it is: one `rg` walk per search, in the jailed directory's descriptor
(no raced link leads it outside). rg decides ignores (in git and outside), binaries and links;
the model's glob goes to it as `--glob` (as in rg it can name an ignored file, never an ignored
directory's) and applies exactly after; `--glob=!.git` comes last so no glob overrides it.
Files are named by their jailed descriptors (`/proc/self/fd/N`): one searched file, and in
content mode, after a `-c` walk, the files shown (numbered alone: cheaper than a `-n` walk)."""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Collection
from pathlib import Path

from live_memory.config.constants import BINARY_SNIFF_BYTES, NON_GIT_SKIP_DIRS
from live_memory.tools.arguments import BadToolArguments
from live_memory.tools.grep import OUT_OF_TIME, GrepQuery, GrepTarget
from live_memory.tools.jail import check_regular, open_in_root
from live_memory.tools.scope import Scope

__all__ = ["find_ripgrep", "rg_numbers", "rg_search"]

_BASE = ["--no-config", "--hidden", "--no-require-git", "--color=never", "--engine=auto"]
_BASE += ["--with-filename", "--null", "--no-messages"]
_MODES = {"files_with_matches": ["-l"], "count": ["-c"], "content": ["-c"]}
_OUTSIDE_GIT = [f"--glob=!{name}/" for name in NON_GIT_SKIP_DIRS if name != ".git"]
_NESTED_BRACES = re.compile(r"\{[^}]*\{")  # rg's globs have none; ours expand them
_REGEX_ERRORS = ("regex parse error", "error parsing regex", "PCRE2", "unrecognized")
_FS = (sys.getfilesystemencoding(), sys.getfilesystemencodeerrors())  # os.fsdecode's, in C
_COUNT = re.compile(r"\0(\d+)\n")  # ends `path\0count\n`: a path may hold `\n`, never `\0`
_NUMBERED = re.compile(rb"/proc/self/fd/(\d+)\0(\d+):")  # then a byte at most or [Omitted..]


@functools.cache
def find_ripgrep() -> str | None:
    """The rg binary: the one installed next to this interpreter's scripts, then PATH."""
    path = [sysconfig.get_path("scripts") or "", os.environ.get("PATH", os.defpath)]
    return shutil.which("rg", path=os.pathsep.join(filter(None, path)))


def rg_search(
    binary: str, scope: Scope, query: GrepQuery, target: GrepTarget, deadline: float
) -> dict[str, int]:
    args = [binary, *_BASE, "-i" if query.ignore_case else "-s", *_MODES[query.mode]]
    if query.mode == "content":
        args.append(f"--max-count={query.per_file_cap}")
    if target.is_file:  # named by its jailed descriptor: searched even if ignored
        fd = open_in_root(scope.root, target.rel, secret_patterns=scope.secret_patterns).fd
        if b"\0" in os.pread(check_regular(fd, target.rel), BINARY_SNIFF_BYTES, 0):
            os.close(fd)  # binary, as rg's walk would say
            return {}
        args += ["--text", "--", query.pattern, f"/proc/self/fd/{fd}"]
    else:  # rg starts in (its view of) the jailed directory
        fd = open_in_root(scope.root, target.rel, directory=True, secret_patterns=()).fd
        args += [*_globs(target, str(scope.root)), "--", query.pattern]
    try:
        cwd = None if target.is_file else f"/proc/self/fd/{fd}"
        out = _run(args, query.pattern, deadline, [fd], cwd)
    finally:
        os.close(fd)
    found = _parse(out.decode(*_FS), query, f"{target.rel}/" if target.rel else "")
    if target.is_file:
        return dict.fromkeys([target.rel], found.popitem()[1]) if found else {}
    return found if target.glob is None else {r: found[r] for r in target.selected(found)}


def rg_numbers(
    binary: str, scope: Scope, query: GrepQuery, opened: dict[str, int], deadline: float
) -> dict[str, list[int]]:
    """Read as text (the walk judged them); Grep reads the lines from the same descriptors."""
    named = {fd: rel for rel, fd in opened.items()}
    args = [binary, *_BASE, "-i" if query.ignore_case else "-s", "-n", "--text", "-j1"]  # few files
    args += ["--max-columns=1", f"--max-count={query.per_file_cap}", "--", query.pattern]
    out = _run([*args, *(f"/proc/self/fd/{fd}" for fd in named)], query.pattern, deadline, named)
    numbers: dict[str, list[int]] = {rel: [] for rel in opened}
    for fd, number in _NUMBERED.findall(out):
        numbers[named[int(fd)]].append(int(number))
    return numbers


def _run(
    command: list[str], pattern: str, deadline: float, fds: Collection[int], cwd: str | None = None
) -> bytes:
    # stdout to a file: draining a pipe record by record costs more CPU than the search.
    with tempfile.TemporaryFile() as stdout:
        try:  # the stderr pipe's EOF wakes us when rg exits (no polling); killed at the deadline
            done = subprocess.run(
                command,
                cwd=cwd,
                pass_fds=tuple(fds),
                stdin=subprocess.DEVNULL,
                stdout=stdout,
                stderr=subprocess.PIPE,  # a few lines at most (--no-messages)
                timeout=deadline - time.monotonic(),  # past it: TimeoutExpired at once
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise TimeoutError(OUT_OF_TIME) from None
        stdout.seek(0)
        out = stdout.read()
    err = done.stderr.decode(errors="replace")
    if done.returncode == 2 and not out and any(m in err for m in _REGEX_ERRORS):
        reasons = [line for line in err.splitlines() if line.startswith("error:")] or [err]
        raise BadToolArguments(f"Grep: invalid regex {pattern!r}: {reasons[-1]}")
    return out


def _globs(target: GrepTarget, root: str) -> list[str]:
    """The model's glob as rg's (unless rg reads it otherwise: a trailing `/` means
    directories only there), then ours, which win by coming later (outside git, the
    listing's skipped trees such as `node_modules`)."""
    pattern = target.glob.pattern.strip() if target.glob is not None else ""
    in_git = any(os.path.lexists(path / ".git") for path in (Path(root), *Path(root).parents))
    globs = ["--glob=!.git"] if in_git else ["--glob=!.git", *_OUTSIDE_GIT]
    if not pattern or pattern.endswith("/") or _NESTED_BRACES.search(pattern):
        return globs
    return [f"--glob={'!' if target.exclude else ''}{pattern}", *globs]


def _parse(out: str, query: GrepQuery, prefix: str) -> dict[str, int]:
    """`path\\0` (-l) or `path\\0count\\n` (-c) each: decoded whole (ASCII \\0, digits), cut in C"""
    if query.mode == "files_with_matches":
        return dict.fromkeys(map(prefix.__add__, out.split("\0")[:-1]), 1)
    cut = _COUNT.split(out)  # path, count, path, count, ..., ''
    return dict(zip(map(prefix.__add__, cut[0:-1:2]), map(int, cut[1::2]), strict=True))
