"""What ripgrep's own walk of a workspace needs to agree with the workspace listing.

ripgrep is fast because it walks the tree itself, honouring `.gitignore` natively. The
listing (`list_workspace_files`) is git's answer instead, or a `.gitignore`-honouring walk of
our own outside git. They differ in a few known ways, which this module measures with cheap,
index-only git queries that run while ripgrep searches (and are remembered while the index
and the ignore files ripgrep read stay unchanged, see `CorrectionCache`):

- git lists tracked files that match an ignore rule; ripgrep skips them (searched explicitly);
- git does not list skip-worktree entries, even when they are on disk (dropped);
- a directory named explicitly (Grep's `path`) is walked by ripgrep even when it is ignored
  or lies inside a nested repository; the listing has none of its untracked files (dropped).

Symlinks and nested repositories found during the walk come from ripgrep's own log (see
`ripgrep_output`). Outside git, the listing is computed here, and ripgrep's matches must be
among its files.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from live_memory.tools.git_command import GitUnavailable, run_git_concurrently
from live_memory.tools.listing import walk_workspace

__all__ = ["CorrectionCache", "WalkCorrection", "correct_walk", "in_nested_repository"]

logger = logging.getLogger(__name__)

_SKIP_WORKTREE_TAG = "\0S "  # `git ls-files -t` record of a skip-worktree entry
_RACY_S = 1.0  # a file changed this close to (or after) a query's start is not trusted
_MAX_ENTRIES = 64
_Stamp = tuple[int, int, int, int] | None  # inode, size, mtime_ns, ctime_ns; None: missing


@dataclass(frozen=True, slots=True)
class WalkCorrection:
    """How to turn ripgrep's walk below a directory into a search of the listed files."""

    in_git: bool
    """The listing is git's; ripgrep should honour git's ignore sources (else only the
    `.gitignore` files below the root, like our own walk)."""
    unseen: tuple[str, ...] = ()
    """Listed files a no-follow, ignore-honouring walk never searches: tracked-but-ignored
    files (in git) or symlinks (outside git)."""
    hidden: frozenset[str] = frozenset()
    """Files ripgrep may find that the listing leaves out (skip-worktree entries)."""
    target_unlisted: bool = False
    """The searched directory is ignored or inside a nested repository: nothing ripgrep finds
    below it is listed (only `unseen` files are)."""
    listed: frozenset[str] | None = None
    """Outside git: every listed file; ripgrep's matches must be among them."""
    index: str | None = None
    """The git index file the answer was read from (absolute)."""

    @property
    def keeps_all(self) -> bool:
        """Does `keeps` accept every file (no need to ask it path by path)?"""
        return self.listed is None and not self.target_unlisted and not self.hidden

    def keeps(self, rel: str) -> bool:
        """May a file ripgrep's walk found be reported?"""
        if self.listed is not None:
            return rel in self.listed
        return not self.target_unlisted and rel not in self.hidden


def correct_walk(root: Path, rel_dir: str) -> WalkCorrection:
    """Measure the correction for a walk of `rel_dir` ('' = all) below the resolved `root`.

    Never raises: without a usable git it falls back to the listing walk, like the listing.
    """
    commands = [
        ["ls-files", "-z", "-t", "--cached"],
        ["ls-files", "-z", "--cached", "--ignored", "--exclude-standard"],
        ["rev-parse", "--git-path", "index"],
    ]
    if rel_dir:
        commands.append(["check-ignore", "--no-index", "-q", "--", rel_dir])
    try:
        results = run_git_concurrently(root, commands)
        tracked = results[0]
        # Like the listing: an empty git answer (say, the root is an ignored directory) means
        # the walk decides. Untracked files are only looked for when nothing is tracked.
        in_git = tracked.ok and (_keeps_tracked(tracked.stdout) or _lists_untracked(root))
    except GitUnavailable as exc:
        logger.debug("correcting the walk of %s without git: %s", root, exc)
        in_git = False
    if not in_git:
        return _outside_git(root)
    hidden = frozenset(_skip_worktree(os.fsdecode(b"\0" + tracked.stdout)))
    ignored = results[1]
    unseen = os.fsdecode(ignored.stdout).split("\0")[:-1] if ignored.ok else []
    index = os.fsdecode(results[2].stdout).strip() if results[2].ok else ""
    return WalkCorrection(
        in_git=True,
        unseen=tuple(sorted(path for path in unseen if path not in hidden)),
        hidden=hidden,
        target_unlisted=len(results) > 3 and results[3].returncode == 0,
        index=os.path.join(root, index) if index else None,
    )


def in_nested_repository(root: Path, rel_dir: str) -> bool:
    """Is `rel_dir`, or a directory between it and the root, another repository's top?"""
    parts = rel_dir.split("/") if rel_dir else []
    return any(
        os.path.lexists(os.path.join(root, *parts[:depth], ".git"))
        for depth in range(1, len(parts) + 1)
    )


def _keeps_tracked(stdout: bytes) -> bool:
    """Does `ls-files -t --cached` list an entry that is not skip-worktree?"""
    skipped = stdout.count(b"\0S ") + stdout.startswith(b"S ")
    return stdout.count(b"\0") > skipped


def _lists_untracked(root: Path) -> bool:
    """Does git list an untracked file (not a nested repository's `dir/`)?"""
    others = run_git_concurrently(root, [["ls-files", "-z", "--others", "--exclude-standard"]])[0]
    return others.ok and any(
        record and not record.endswith(b"/") for record in others.stdout.split(b"\0")
    )


def _skip_worktree(text: str) -> list[str]:
    """The paths of `ls-files -t` records tagged S (the text starts with a NUL)."""
    found: list[str] = []
    start = text.find(_SKIP_WORKTREE_TAG)
    while start >= 0:
        end = text.find("\0", start + 1)
        found.append(text[start + len(_SKIP_WORKTREE_TAG) : end if end >= 0 else len(text)])
        start = text.find(_SKIP_WORKTREE_TAG, start + 1)
    return found


def _outside_git(root: Path) -> WalkCorrection:
    walked = walk_workspace(root)
    return WalkCorrection(in_git=False, unseen=walked.links, listed=frozenset(walked.files))


@dataclass(frozen=True, slots=True)
class _Entry:
    correction: WalkCorrection
    ignore_files: frozenset[str]
    stamps: tuple[tuple[str, _Stamp], ...]


class CorrectionCache:
    """git's corrections per (root, directory), trusted while their inputs are unchanged.

    git's answer depends on the index and on the ignore files; ripgrep's debug log names
    every ignore file it read (a new or deleted one changes that set). An entry is used only
    while the index and those files keep their inode, size and times, and is not stored when
    one of them changed too close to the query. Safe to share between threads (single dict
    operations); bounded, cleared when full.
    """

    def __init__(self, *, max_entries: int = _MAX_ENTRIES, racy_seconds: float = _RACY_S) -> None:
        self._max_entries = max_entries
        self._racy_seconds = racy_seconds
        self._entries: dict[tuple[str, str], _Entry] = {}

    def lookup(self, root: Path, rel_dir: str) -> tuple[WalkCorrection, frozenset[str]] | None:
        """The remembered correction and the ignore files it assumed, if still valid."""
        entry = self._entries.get((str(root), rel_dir))
        if entry is None or any(_stamp(path) != stamp for path, stamp in entry.stamps):
            return None
        return entry.correction, entry.ignore_files

    def store(
        self,
        root: Path,
        rel_dir: str,
        correction: WalkCorrection,
        ignore_files: Iterable[str],
        *,
        started: float,
    ) -> None:
        """Remember a correction git computed after `started` (a `time.time()` value)."""
        if not correction.in_git or correction.index is None:
            return
        files = frozenset(ignore_files)
        stamps = tuple((path, _stamp(path)) for path in sorted({correction.index, *files}))
        # A file changed during (or just before) the query may not be reflected in the answer.
        racy_ns = (started - self._racy_seconds) * 1e9
        if any(stamp is None or max(stamp[2], stamp[3]) >= racy_ns for _, stamp in stamps):
            return
        if len(self._entries) >= self._max_entries:
            self._entries.clear()
        self._entries[(str(root), rel_dir)] = _Entry(correction, files, stamps)


def _stamp(path: str) -> _Stamp:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
