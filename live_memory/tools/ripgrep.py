"""The ripgrep Grep engine: the Python engine's answers at ripgrep's own speed.

ripgrep walks the searched directory itself, as a plain `rg` would: hidden files included,
`.git` skipped, links not followed, ignore files honoured as git honours them (outside git,
only the `.gitignore` files below the root, as our walk does), files over
GREP_MAX_FILE_BYTES skipped, bytes searched raw, binary files (a NUL byte) skipped. What the
walk cannot know comes from git (`correct_walk`, remembered while nothing it depends on
changes). The walk's matches are then filtered (listing, scope, secrets: only matching
paths, so it is cheap) and the few listed files the walk could not search are searched by
name: symlinks that stay inside the root, tracked files matching an ignore rule, and files
whose first NUL byte comes after BINARY_SNIFF_BYTES.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import os
import re
import shutil
import subprocess
import sysconfig
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from live_memory.config.constants import BINARY_SNIFF_BYTES, GREP_MAX_FILE_BYTES
from live_memory.errors import PathOutsideWorkspace
from live_memory.tools.grep_engine import FileHits, GrepMode, GrepQuery, GrepTarget, is_binary_head
from live_memory.tools.jail import ListedFileReader, UnreadableFile
from live_memory.tools.ripgrep_command import (
    NAMED_FLAGS,
    RipgrepOutput,
    batches,
    mode_flags,
    run_ripgrep,
    walk_flags,
)
from live_memory.tools.ripgrep_output import WalkLog, parse_hits, parse_walk_log
from live_memory.tools.scope import Scope
from live_memory.tools.walk_correction import (
    CorrectionCache,
    WalkCorrection,
    correct_walk,
    in_nested_repository,
)

__all__ = ["RipgrepEngine", "find_ripgrep"]

logger = logging.getLogger(__name__)

_OUT_OF_TIME = "the search ran out of time; narrow the path, glob or pattern"
_OLDEST_MAJOR = 14  # the debug log lines Grep reads (see ripgrep_output) appeared in 14.0


def find_ripgrep() -> str | None:
    """The rg binary: the one installed next to this interpreter's scripts, then PATH.

    Only a ripgrep whose debug log Grep can read (14 or later) is returned.
    """
    candidates = []
    scripts = sysconfig.get_path("scripts")
    if scripts:
        candidates.append(os.path.join(scripts, "rg"))
    candidates.append(shutil.which("rg") or "")
    for candidate in candidates:
        executable = os.path.isfile(candidate) and os.access(candidate, os.X_OK)
        if executable and _supported(candidate):
            return candidate
    return None


@functools.lru_cache(maxsize=8)
def _supported(binary: str) -> bool:
    try:
        completed = subprocess.run(
            [binary, "--version"], capture_output=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError) as exc:
        logger.warning("cannot run %s: %s", binary, exc)
        return False
    match = re.match(rb"ripgrep (\d+)\.", completed.stdout)
    if match is None or int(match.group(1)) < _OLDEST_MAJOR:
        logger.warning("%s is not ripgrep %d or later; Grep will not use it", binary, _OLDEST_MAJOR)
        return False
    return True


class RipgrepEngine:
    """Runs `rg` with cwd=root. Remembers per root whether git lists it (which flags a walk
    needs) and git's corrections; plain dicts, so threads may share the engine (a stale
    guess costs one more walk).
    """

    name = "ripgrep"

    def __init__(self, binary: str, *, corrections: CorrectionCache | None = None) -> None:
        self._binary = binary
        self._in_git: dict[str, bool] = {}
        self._corrections = corrections or CorrectionCache()

    def search(
        self, scope: Scope, query: GrepQuery, target: GrepTarget, deadline: float
    ) -> dict[str, FileHits]:
        if target.is_file:
            named = [target.rel] if _searchable(scope, target.rel) else []
            return self._search_named(scope, query, named, deadline)
        walked, log, correction = self._corrected_walk(scope, query, target.rel, deadline)
        hits = parse_hits(walked.stdout, _walk_mode(query))
        found, named = _filtered(scope, target, correction, hits, log)
        found.update(self._search_named(scope, query, named, deadline))
        if query.mode == "content":
            self._add_line_numbers(scope, query, found, deadline)
        return found

    def _corrected_walk(
        self, scope: Scope, query: GrepQuery, rel_dir: str, deadline: float
    ) -> tuple[RipgrepOutput, WalkLog, WalkCorrection]:
        """Walk `rel_dir` with rg while git's part of the correction is measured (or reused)."""
        started = time.time()
        root = scope.root
        cached = self._corrections.lookup(root, rel_dir)
        if cached is not None:
            walked = self._walk(scope, query, rel_dir, in_git=True, deadline=deadline)
            log = parse_walk_log(walked.stderr)
            correction, assumed = cached
            if _absolute(root, log.ignore_files) == assumed:
                return walked, log, _for_target(root, rel_dir, correction)
            correction = correct_walk(root, rel_dir)  # an ignore file came or went
            in_git = True
        else:
            known = self._in_git.get(str(root))
            in_git = _inside_git_marker(root) if known is None else known
            pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="grep-correction")
            try:
                pending = pool.submit(correct_walk, root, rel_dir)
                walked = self._walk(scope, query, rel_dir, in_git=in_git, deadline=deadline)
                correction = pending.result(timeout=max(deadline - time.monotonic(), 0.0))
            except TimeoutError:
                raise TimeoutError(_OUT_OF_TIME) from None
            finally:
                pool.shutdown(wait=False)
            log = parse_walk_log(walked.stderr)
        if correction.in_git != in_git:
            walked = self._walk(scope, query, rel_dir, in_git=correction.in_git, deadline=deadline)
            log = parse_walk_log(walked.stderr)
        self._in_git[str(root)] = correction.in_git
        ignore_files = _absolute(root, log.ignore_files)
        self._corrections.store(root, rel_dir, correction, ignore_files, started=started)
        return walked, log, _for_target(root, rel_dir, correction)

    def _walk(
        self, scope: Scope, query: GrepQuery, rel_dir: str, *, in_git: bool, deadline: float
    ) -> RipgrepOutput:
        args = [
            *walk_flags(in_git=in_git),
            *mode_flags(query, _walk_mode(query)),
            "--",
            query.pattern,
            *([rel_dir] if rel_dir else []),
        ]
        return run_ripgrep(self._binary, scope.root, args, pattern=query.pattern, deadline=deadline)

    def _search_named(
        self, scope: Scope, query: GrepQuery, files: Sequence[str], deadline: float
    ) -> dict[str, FileHits]:
        found: dict[str, FileHits] = {}
        for batch in batches(files):
            args = [*NAMED_FLAGS, *mode_flags(query, query.mode), "--", query.pattern, *batch]
            output = run_ripgrep(
                self._binary, scope.root, args, pattern=query.pattern, deadline=deadline
            )
            found.update(parse_hits(output.stdout, query.mode))
        return found

    def _add_line_numbers(
        self, scope: Scope, query: GrepQuery, found: dict[str, FileHits], deadline: float
    ) -> None:
        """Cap counts like the Python engine and fetch the line numbers that will be shown."""
        for rel, hits in found.items():
            if hits.count > query.per_file_cap:
                found[rel] = FileHits(count=query.per_file_cap, lines=hits.lines)
        wanted: list[str] = []
        shown = 0
        for rel in sorted(found):
            if shown >= query.lines_needed:
                break
            if not found[rel].lines:
                wanted.append(rel)
            shown += found[rel].count
        if wanted:
            found.update(self._search_named(scope, query, wanted, deadline))


def _walk_mode(query: GrepQuery) -> GrepMode:
    # Content mode walks with --count: exact binary verdicts (the whole file is read) and one
    # line per file; line numbers are fetched afterwards for the files shown only.
    return "files_with_matches" if query.mode == "files_with_matches" else "count"


def _filtered(
    scope: Scope,
    target: GrepTarget,
    correction: WalkCorrection,
    hits: dict[str, FileHits],
    log: WalkLog,
) -> tuple[dict[str, FileHits], list[str]]:
    """The walk's listed, visible hits, and the files still to search by name."""
    late: list[str] = []
    for rel, offset in log.binary.items():
        hits.pop(rel, None)  # a file stopped at a NUL may have printed a partial answer
        if offset >= BINARY_SNIFF_BYTES:
            late.append(rel)
    nested = log.nested_repositories if correction.in_git else ()
    plain = not target.rel and target.glob is None and not nested and correction.keeps_all

    def reported(rel: str) -> bool:
        return correction.keeps(rel) and not rel.startswith(nested) and target.selects(rel)

    if plain:
        for rel in scope.invisible_paths(hits):
            del hits[rel]
        found = hits
    else:
        kept = [rel for rel in hits if reported(rel)]
        hidden = scope.invisible_paths(kept)
        found = {rel: hits[rel] for rel in kept if rel not in hidden}
    unseen = list(correction.unseen)
    if correction.in_git and not correction.target_unlisted:
        unseen += [rel for rel in log.links if not rel.startswith(nested)]
    named = [rel for rel in unseen if rel not in correction.hidden and target.selects(rel)]
    named = [rel for rel in _visible(scope, named) if _searchable(scope, rel)]
    named += _visible(scope, [rel for rel in late if reported(rel)])
    return found, sorted(set(named))


def _visible(scope: Scope, paths: list[str]) -> list[str]:
    hidden = scope.invisible_paths(paths)
    return [rel for rel in paths if rel not in hidden]


def _searchable(scope: Scope, rel: str) -> bool:
    """Is `rel` a regular, non-empty, not too big, non-binary file (links stay inside)?"""
    size = scope.regular_size(rel)
    if size is None or not 0 < size <= GREP_MAX_FILE_BYTES:
        return False
    reader = ListedFileReader(scope.root, scope.secret_patterns)
    try:
        return not is_binary_head(reader.head(rel, BINARY_SNIFF_BYTES))
    except (UnreadableFile, PathOutsideWorkspace, OSError) as exc:
        logger.debug("grep skips %s: %s", rel, exc)
        return False


def _for_target(root: Path, rel_dir: str, correction: WalkCorrection) -> WalkCorrection:
    """Mark a searched directory inside a nested repository: none of its files are listed."""
    if correction.in_git and rel_dir and in_nested_repository(root, rel_dir):
        return dataclasses.replace(correction, target_unlisted=True)
    return correction


def _absolute(root: Path, paths: frozenset[str]) -> frozenset[str]:
    return frozenset(os.path.normpath(os.path.join(root, path)) for path in paths)


def _inside_git_marker(root: Path) -> bool:
    """A first guess at git's verdict: is there a `.git` in the root or above it?"""
    return any(os.path.lexists(directory / ".git") for directory in (root, *root.parents))
