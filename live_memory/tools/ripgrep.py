"""Grep on ripgrep as it is: one `rg` walk per search (content mode: `-n`; past its output cap a
`-c` walk, then rg numbers the files shown), in the jailed directory's descriptor (no raced link
leads it outside). rg decides ignores (in git and outside), binaries and links; the model's glob
goes to it as `--glob` (it can name an ignored file, never an ignored directory's) and applies
exactly after; `--glob=!.git` comes last so no glob overrides it. Hits are those in the text
Read shows: the files found that may hold a secret (a second `-l` walk for SECRET_HINT) are
redacted and searched again, so no match lies inside a redacted span: a guessed prefix of a
key finds nothing, whatever it guesses."""

from __future__ import annotations

import functools
import logging
import os
import re
import select
import shutil
import sys
import sysconfig
import time
from collections.abc import Callable, Collection, Iterable
from subprocess import DEVNULL, Popen

from live_memory.config import constants as C
from live_memory.hygiene import PUTTY_PRIVATE, SECRET_HINT, redact_lines, redact_secrets
from live_memory.tools.arguments import BadToolArguments
from live_memory.tools.grep import OUT_OF_TIME, GrepQuery, GrepTarget, Hits
from live_memory.tools.jail import open_files_in_root, open_in_root
from live_memory.tools.scope import Scope
from live_memory.tools.text import decode_text, split_lines
from live_memory.vendored import VENDORED_DIRS

__all__ = ["find_ripgrep", "rg_numbers", "rg_search"]

logger = logging.getLogger(__name__)

_BASE = ["--no-config", "--hidden", "--no-require-git", "--color=never", "--engine=auto"]
_BASE += ["--with-filename", "--null", "--no-messages"]
_MODES = {"files_with_matches": ["-l"], "count": ["-c"], "content": ["-n", "--max-columns=1"]}
_OUTSIDE_GIT = [f"--glob=!{name}/" for name in C.NON_GIT_SKIP_DIRS if name != ".git"]
_VENDORED = [f"--glob=!{name}/" for name in sorted(VENDORED_DIRS)]
_NESTED_BRACES = re.compile(r"\{[^}]*\{")  # rg's globs have none; ours expand them
_REGEX_ERRORS = ("regex parse error", "error parsing regex", "PCRE2", "unrecognized")
_FS = (sys.getfilesystemencoding(), sys.getfilesystemencodeerrors())  # os.fsdecode's, in C
_COUNT = re.compile(r"\0(\d+)\n")  # ends `path\0count\n`: a path may hold `\n`, never `\0`
# `path\0N:` and rg's stand-in for the line, or the line if under 2 bytes (empty; last, no \n)
_NUMBERED = re.compile(rb"([^\0]*)\0(\d+):(?:\[Omitted long matching line\]|[^\n])?\n")
_KEY_BLOCK = re.compile(b"PRIVATE KEY|" + re.escape(PUTTY_PRIVATE.encode()))
_LINE = re.compile(rb"([^\0]*)\0(\d+):([^\n]*)\n")  # `path\0N:line\n` (rg -n, full lines)
_BINARY_AFTER_MATCH = b": WARNING: stopped searching binary file"  # a -c walk drops the file
_HINT_NAMES_MAX = 2000  # files found named in one rg run that looks for SECRET_HINT (~100 KB)


@functools.cache
def find_ripgrep() -> str | None:
    """The rg binary: the one installed next to this interpreter's scripts, then PATH."""
    path = [sysconfig.get_path("scripts") or "", os.environ.get("PATH", os.defpath)]
    return shutil.which("rg", path=os.pathsep.join(filter(None, path)))


def rg_search(binary: str, scope: Scope, query: GrepQuery, target: GrepTarget) -> Hits:
    fd = open_in_root(scope.root, target.rel, directory=True, secret_patterns=()).fd
    globs = _globs(target, str(scope.root), scope.vendored)
    args = [*_args(binary, query), *globs, "--", query.pattern]
    run = functools.partial(_run, query=query, fds=[fd], cwd=f"/proc/self/fd/{fd}")
    numbered = query.mode == "content"
    name = f"{target.rel}/".removeprefix("/").__add__
    try:  # rg starts in (its view of) the jailed directory
        out = run(args, cap=C.GREP_NUMBERED_WALK_MAX_BYTES * numbered)
        if numbered and (out is None or _BINARY_AFTER_MATCH in out):  # count, number later
            numbered, out = False, run([binary, "-c", *args[1:]])
        found, numbers = _parse(out or b"", query, numbered, name)
        found = {r: found[r] for r in target.selected(found)}
        # The files found, by name (no second walk): in batches, to keep each command short.
        names, hinted = [rel[len(name("")) :] for rel in found], set[str]()
        for start in range(0, len(names), _HINT_NAMES_MAX):
            where = ["--text", "--", SECRET_HINT, *names[start : start + _HINT_NAMES_MAX]]
            hinted |= _paths(run([*_hint_args(binary), *where]), name)
    finally:
        os.close(fd)
    return _on_redacted_text(binary, scope, query, (found, numbers), hinted)


def rg_numbers(binary: str, scope: Scope, query: GrepQuery, opened: dict[str, int]) -> Hits:
    """rg on files named by their jailed descriptors, as text (judged by the walk or the sniff)."""
    named = {f"/proc/self/fd/{fd}": rel for rel, fd in opened.items()}
    args = [*_args(binary, query), "--text", "-j1", "--", query.pattern, *named]  # few files
    out = _run(args, query, opened.values()) if named else b""  # (none: rg would walk `.`)
    hits = _parse(out or b"", query, query.mode == "content", named.__getitem__)
    if not hits[0]:
        return hits
    hint = [*_hint_args(binary), "--text", "-j1", "--", SECRET_HINT, *named]
    hinted = _paths(_run(hint, query, opened.values()), named.__getitem__)
    return _on_redacted_text(binary, scope, query, hits, hinted)


def _hint_args(binary: str) -> list[str]:
    return [binary, *_BASE, "-s", "-l"]


def _paths(out: bytes | None, name: Callable[[str], str]) -> set[str]:
    return set(map(name, (out or b"").decode(*_FS).split("\0")[:-1]))


def _on_redacted_text(
    binary: str, scope: Scope, query: GrepQuery, hits: Hits, suspects: Iterable[str]
) -> Hits:
    """`hits` as the text Read shows gives them. rg prints every matching line (no cap) of each
    file found that may hold a secret; the lines redaction changes are searched again,
    redacted (all in one rg run), and the file's hits are its unchanged lines and the changed
    ones that still match. A file with a key block is redacted whole (its lines go with their
    neighbours); one too big for that (GREP_MAX_FILE_BYTES) is left out."""
    found, numbers = hits
    kept: dict[str, list[int]] = {}  # matching lines redaction leaves as they are
    again: dict[str, tuple[list[int], list[str]]] = {}  # lines to search again, redacted
    chosen = sorted(rel for rel in suspects if rel in found)
    for start in range(0, len(chosen), C.GREP_OPEN_FILES_MAX):
        batch = chosen[start : start + C.GREP_OPEN_FILES_MAX]
        opened = open_files_in_root(scope.root, batch, secret_patterns=scope.secret_patterns)
        try:
            named = {f"/proc/self/fd/{fd}": rel for rel, fd in opened.items()}
            case = "-i" if query.ignore_case else "-s"
            every = [binary, *_BASE, case, "-n", "--text", "--", query.pattern, *named]
            # None opened (refused, or gone since the walk): rg given no file would walk `.`.
            lines = _lines(_run(every, query, opened.values()), named) if named else {}
            for rel, fd in opened.items():
                data = os.pread(fd, C.GREP_MAX_FILE_BYTES + 1, 0)
                if _KEY_BLOCK.search(data):  # redacted with their neighbours: whole
                    kept[rel], again[rel] = [], _whole(rel, data)
                    del lines[rel]
            records = [(rel, n, line) for rel, numbered in lines.items() for n, line in numbered]
            shown = redact_lines([line for _, _, line in records])  # (one call: cheaper)
            for rel in opened.keys() - again.keys():
                kept[rel], again[rel] = [], ([], [])
            for (rel, n, line), red in zip(records, shown, strict=True):
                if red == line:
                    kept[rel].append(n)
                else:
                    again[rel][0].append(n)
                    again[rel][1].append(red)
        finally:
            for fd in opened.values():
                os.close(fd)
        kept.update((rel, []) for rel in set(batch) - opened.keys())  # gone since the walk
    matched = _search_lines(binary, query, again) if any(n for n, _ in again.values()) else {}
    cap = query.per_file_cap if query.mode == "content" else None
    for rel, same in kept.items():
        lines_found = sorted(same + matched.get(rel, []))[:cap]
        if not lines_found:
            found.pop(rel, None)
            if numbers is not None:
                numbers.pop(rel, None)
            continue
        found[rel] = 1 if query.mode == "files_with_matches" else len(lines_found)
        if numbers is not None:
            numbers[rel] = lines_found
    return found, numbers


def _lines(out: bytes | None, named: dict[str, str]) -> dict[str, list[tuple[int, str]]]:
    """`path\\0N:line` records (rg -n): each file's numbered lines."""
    lines: dict[str, list[tuple[int, str]]] = {}
    for path, number, line in _LINE.findall(out or b""):
        text = line.decode("utf-8", errors="replace").removeprefix("\ufeff")
        lines.setdefault(named[path.decode(*_FS)], []).append((int(number), text))
    return lines


def _whole(rel: str, data: bytes) -> tuple[list[int], list[str]]:
    """Every line of a file with a key block, redacted as Read redacts it (none: too big)."""
    if len(data) > C.GREP_MAX_FILE_BYTES:
        logger.debug("Grep leaves out %s: too big to redact", rel)
        return [], []
    whole = split_lines(redact_secrets(decode_text(data))[0])
    return list(range(1, len(whole) + 1)), whole


def _search_lines(
    binary: str, query: GrepQuery, lines: dict[str, tuple[list[int], list[str]]]
) -> dict[str, list[int]]:
    """Which of these numbered lines match: one rg run over them all, a line each, from a
    memfd (no pattern spans a line)."""
    order = [(rel, number) for rel, (numbers, _) in lines.items() for number in numbers]
    memfd = os.memfd_create("redacted", os.MFD_CLOEXEC)
    try:
        with os.fdopen(memfd, "wb", closefd=False) as sink:
            for _, texts in lines.values():
                sink.writelines(f"{line}\n".encode("utf-8", "surrogatepass") for line in texts)
        case = "-i" if query.ignore_case else "-s"
        args = [binary, *_BASE, case, "-n", "--max-columns=1", "--text", "-j1", "--"]
        out = _run([*args, query.pattern, f"/proc/self/fd/{memfd}"], query, [memfd])
    finally:
        os.close(memfd)
    found: dict[str, list[int]] = {}
    for _, at in _NUMBERED.findall(out or b""):
        rel, number = order[int(at) - 1]
        found.setdefault(rel, []).append(number)
    return found


def _args(binary: str, query: GrepQuery) -> list[str]:
    args = [binary, *_BASE, "-i" if query.ignore_case else "-s", *_MODES[query.mode]]
    return args + [f"--max-count={query.per_file_cap}"] * (query.mode == "content")


def _run(
    args: list[str], query: GrepQuery, fds: Collection[int], cwd: str | None = None, cap: int = 0
) -> bytes | None:
    """rg's output (`--no-messages` leaves a bad regex's only): with `cap`, a pipe read as it comes
    (None past `cap`); else a memfd (a pipe's many reads cost more CPU than the search)."""
    done, end = os.pipe2(os.O_CLOEXEC)
    out = end if cap else os.memfd_create("rg", os.MFD_CLOEXEC)
    owned, child, chunks, size, poller = {done, end, out}, None, [], 0, select.poll()
    try:
        child = Popen(args, cwd=cwd, pass_fds=(*fds, end), stdin=DEVNULL, stdout=out, stderr=out)
        os.close(end)
        owned.discard(end)
        poller.register(done, select.POLLIN)  # its EOF says rg exited (no polling)
        while (left := query.deadline - time.monotonic()) > 0 and poller.poll(left * 1000):
            if not (data := os.read(done, 1 << 16)):
                child.wait()  # `done` closed as rg exited
                break
            chunks.append(data)  # (only a capped run writes here)
            if (size := size + len(data)) > cap:
                return None
        else:
            raise TimeoutError(OUT_OF_TIME)  # rg is killed
        output = b"".join(chunks) if cap else os.pread(out, os.fstat(out).st_size, 0)
    finally:
        if child is not None and child.returncode is None:
            child.kill()
            child.wait()
        for fd in owned:
            os.close(fd)
    error = output.decode(errors="replace") if child.returncode == 2 and b"\0" not in output else ""
    if any(m in error for m in _REGEX_ERRORS):
        reason = ([e for e in error.splitlines() if e.startswith("error:")] or [error])[-1]
        raise BadToolArguments(f"Grep: invalid regex {query.pattern!r}: {reason}")
    return output


def _globs(target: GrepTarget, root: str, vendored: bool) -> list[str]:
    """The model's glob as rg's (unless rg reads it otherwise: a trailing `/` means directories
    only there), then ours, which win by coming later (outside git: `.hg`, `.svn`; unless
    `vendored`: `node_modules` and such, in git too). rg matches them below its start, the
    jailed directory, so a search started inside `node_modules/pkg` still looks there."""
    pattern = target.glob.pattern.strip() if target.glob is not None else ""
    parts = root.split("/")  # (absolute: '' first) the root and its parents
    in_git = any(os.path.lexists("/".join([*parts[:i], ".git"])) for i in range(len(parts), 0, -1))
    globs = ["--glob=!.git"] if in_git else ["--glob=!.git", *_OUTSIDE_GIT]
    globs += [] if vendored else _VENDORED
    if not pattern or pattern.endswith("/") or _NESTED_BRACES.search(pattern):
        return globs
    return [f"--glob={'!' if target.exclude else ''}{pattern}", *globs]


def _parse(out: bytes, query: GrepQuery, numbered: bool, name: Callable[[str], str]) -> Hits:
    """`path\\0` (-l), `path\\0count\\n` (-c) or `path\\0N:` records (-n): cut in C."""
    if numbered:
        numbers: dict[str, list[int]] = {}
        for path, number in _NUMBERED.findall(out):
            numbers.setdefault(name(path.decode(*_FS)), []).append(int(number))
        return {rel: len(found) for rel, found in numbers.items()}, numbers
    text = out.decode(*_FS)
    if query.mode == "files_with_matches":
        return dict.fromkeys(map(name, text.split("\0")[:-1]), 1), None
    cut = _COUNT.split(text)  # path, count, path, count, ..., ''
    return dict(zip(map(name, cut[0:-1:2]), map(int, cut[1::2]), strict=True)), None
