"""Grep on ripgrep as it is: one `rg` run per search, where the jail opened the target.

rg decides ignores (in git and outside), binaries and links; the model's glob goes to it as
`--glob` (as in rg it can name an ignored file, never an ignored directory's) and applies
exactly after; `--glob=!.git` comes last so no glob overrides it. rg's working directory is
the jailed directory's descriptor (one file: on stdin from its jailed descriptor), so no raced
link leads it outside. Content mode asks for line numbers only (`--max-columns=1`)."""

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
from pathlib import Path

from live_memory.config.constants import BINARY_SNIFF_BYTES, NON_GIT_SKIP_DIRS
from live_memory.tools.arguments import BadToolArguments
from live_memory.tools.grep import FileHits, GrepQuery, GrepTarget, out_of_time
from live_memory.tools.jail import check_regular, open_in_root
from live_memory.tools.scope import Scope

__all__ = ["find_ripgrep", "rg_search"]

_BASE = ["--no-config", "--hidden", "--no-require-git", "--color=never", "--engine=auto"]
_BASE += ["--with-filename", "--null", "--no-messages"]
_MODES = {"files_with_matches": ["-l"], "count": ["-c"], "content": ["-n", "--heading"]}
_OUTSIDE_GIT = [f"--glob=!{name}/" for name in NON_GIT_SKIP_DIRS if name != ".git"]
_NESTED_BRACES = re.compile(r"\{[^}]*\{")  # rg's globs have none; ours expand them
_REGEX_ERRORS = ("regex parse error", "error parsing regex", "PCRE2", "unrecognized")
_FS = (sys.getfilesystemencoding(), sys.getfilesystemencodeerrors())  # os.fsdecode's, in C


@functools.cache
def find_ripgrep() -> str | None:
    """The rg binary: the one installed next to this interpreter's scripts, then PATH."""
    scripts = sysconfig.get_path("scripts")
    for candidate in (os.path.join(scripts, "rg") if scripts else "", shutil.which("rg") or ""):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def rg_search(
    binary: str, scope: Scope, query: GrepQuery, target: GrepTarget, deadline: float
) -> dict[str, FileHits]:
    args = [*_BASE, "-i" if query.ignore_case else "-s", *_MODES[query.mode]]
    if query.mode == "content":
        args += ["--max-columns=1", f"--max-count={query.per_file_cap}"]
    if target.is_file:  # on stdin from the jailed descriptor: searched even if ignored
        opened = open_in_root(scope.root, target.rel, secret_patterns=scope.secret_patterns)
        check_regular(opened.fd, target.rel)  # a FIFO on stdin would just read as empty
        if b"\0" in os.pread(opened.fd, BINARY_SNIFF_BYTES, 0):  # binary, as rg's walk says
            os.close(opened.fd)
            return {}
        args += ["--text", "--", query.pattern, "-"]
    else:
        opened = open_in_root(scope.root, target.rel, directory=True, secret_patterns=())
        args += [*_globs(target, str(scope.root)), "--", query.pattern]
    try:
        out = _run(binary, args, query, deadline, opened.fd, directory=not target.is_file)
    finally:
        os.close(opened.fd)
    found = _parse(out, query, f"{target.rel}/" if target.rel else "")
    if target.is_file:
        return dict.fromkeys([target.rel], found.popitem()[1]) if found else {}
    return found if target.glob is None else {r: found[r] for r in target.selected(found)}


def _run(
    binary: str, args: list[str], query: GrepQuery, deadline: float, fd: int, *, directory: bool
) -> bytes:
    # stdout to a file: draining a pipe record by record costs more CPU than the search.
    with tempfile.TemporaryFile() as stdout:
        try:  # the stderr pipe's EOF wakes us when rg exits (no polling); killed at the deadline
            done = subprocess.run(
                [binary, *args],
                cwd=f"/proc/self/fd/{fd}" if directory else None,  # in the child: the jailed dir
                pass_fds=(fd,) if directory else (),
                stdin=subprocess.DEVNULL if directory else fd,
                stdout=stdout,
                stderr=subprocess.PIPE,  # a few lines at most (--no-messages)
                timeout=deadline - time.monotonic(),  # past it: TimeoutExpired at once
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise out_of_time() from None
        stdout.seek(0)
        out = stdout.read()
    err = done.stderr.decode(errors="replace")
    if done.returncode == 2 and not out and any(m in err for m in _REGEX_ERRORS):
        reasons = [line for line in err.splitlines() if line.startswith("error:")] or [err]
        raise BadToolArguments(f"Grep: invalid regex {query.pattern!r}: {reasons[-1]}")
    return out


def _globs(target: GrepTarget, root: str) -> list[str]:
    """The model's glob as rg's (unless rg reads it otherwise: a trailing `/` means
    directories only there), then ours, which win by coming later (outside git, the
    listing's skipped trees such as `node_modules`)."""
    pattern = target.glob.pattern.strip() if target.glob is not None else ""
    globs = ["--glob=!.git"] if _inside_git(root) else ["--glob=!.git", *_OUTSIDE_GIT]
    if not pattern or pattern.endswith("/") or _NESTED_BRACES.search(pattern):
        return globs
    return [f"--glob={'!' if target.exclude else ''}{pattern}", *globs]


@functools.lru_cache(maxsize=64)
def _inside_git(root: str) -> bool:
    return any(os.path.lexists(path / ".git") for path in (Path(root), *Path(root).parents))


def _parse(out: bytes, query: GrepQuery, prefix: str) -> dict[str, FileHits]:
    """`--null` output: after each `path\\0`, nothing (-l), `count\\n` (-c) or `N:...\\n`
    records ended by a blank line (-n --heading). Paths may hold `\\n`, never `\\0`. Bulk
    passes (map over bytes methods), records not copied: on 20k files each pass over rg's
    10 MB costs more than the per-file work."""
    parts = out.split(b"\0")
    if query.mode == "files_with_matches":
        return dict.fromkeys([prefix + path.decode(*_FS) for path in parts[:-1]], FileHits(1))
    tails, mark = parts[1:], b"\n" if query.mode == "count" else b"\n\n"
    ends = list(map(bytes.find, tails, [mark] * len(tails)))  # a count or records, `mark`, path
    paths = [parts[0], *[t[e + len(mark) :] for t, e in zip(tails, ends, strict=True)]]
    names = [prefix + path.decode(*_FS) for path in paths[: len(tails)]]  # (none after the last)
    if query.mode == "count":
        counts = [int(tail[:end]) for tail, end in zip(tails, ends, strict=True)]
        return dict(zip(names, map(FileHits, counts), strict=True))
    ends[-1:] = [len(tail.rstrip(b"\n")) for tail in tails[-1:]]  # no blank line after it
    counts = [n + 1 for n in map(bytes.count, tails, [b"\n"] * len(tails), [0] * len(tails), ends)]
    return dict(zip(names, map(FileHits, counts, tails, ends), strict=True))
