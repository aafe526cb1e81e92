"""What the tools may see: the jailed root, minus secret files, within the monitoring scope."""

from __future__ import annotations

import functools
import logging
import os
import stat
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from live_memory.errors import PathOutsideWorkspace
from live_memory.hygiene import is_secret_path
from live_memory.path_glob import glob_set
from live_memory.tools.jail import (
    UnreadableFile,
    git_internal,
    pointed_git_dirs,
    relative_to_root,
    resolve_in_root,
)
from live_memory.tools.listing import list_workspace_files
from live_memory.vendored import in_vendored_dir

__all__ = ["Scope"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Scope:
    """The immutable view one Toolbox gives the model; safe to share between threads."""

    root: Path
    """Already resolved (`os.path.realpath`)."""
    secret_patterns: tuple[str, ...]
    file_globs: tuple[str, ...]
    """Monitoring scope: globs (see `live_memory.path_glob`); empty means everything."""
    vendored: bool = False
    """List vendored directories too (`live_memory.vendored`); a search started inside one
    lists it anyway."""

    def visible(self, rel: str) -> bool:
        """May the model see this workspace-relative file at all?"""
        return (
            not is_secret_path(rel, self.secret_patterns)
            and self.monitored(rel)
            and not git_internal(str(self.root), rel)
        )

    def invisible_paths(self, paths: Collection[str]) -> set[str]:
        """Those of `paths` that are not `visible`; cheap for the 20k paths of a big search.

        One C-level scan of all the paths finds the few that could be secret (they contain a
        literal piece of some secret pattern); only those get the full test.
        """
        hidden: set[str] = set()
        git_dirs = pointed_git_dirs(str(self.root))
        if git_dirs or ".git" in "\0".join(paths):  # one C-level scan usually says none
            hidden.update(p for p in paths if git_internal(str(self.root), p, git_dirs))
        if self.secret_patterns and paths:
            patterns = self.secret_patterns
            suspects = _secret_suspects(patterns, paths)
            hidden.update(path for path in suspects if is_secret_path(path, patterns))
        if self.file_globs:
            scope = glob_set(self.file_globs)
            hidden.update(path for path in paths if not scope.matches(path))
        return hidden

    def monitored(self, rel: str) -> bool:
        """Is `rel` inside the monitoring scope (`file_globs`)?"""
        return not self.file_globs or glob_set(self.file_globs).matches(rel)

    def require_visible(self, rel: str, *, given: str | None = None) -> None:
        """Raise UnreadableFile when `rel` is secret or outside the monitoring scope.

        `given` is the name the model used; a link called `.env` is secret wherever it points.
        """
        names = (rel,) if not given else (rel, os.path.normpath(given))
        if any(git_internal(str(self.root), name) for name in names):
            raise UnreadableFile(
                f"{given or rel} is inside a git directory (repository internals such as "
                "config hold credentials); use git_search or get_changed_files instead",
                "git",
            )
        if any(is_secret_path(name, self.secret_patterns) for name in names):
            raise UnreadableFile(
                f"{given or rel} looks like a secret file (keys, credentials, .env); "
                "its contents are withheld",
                "secret",
            )
        if not self.monitored(rel):
            raise UnreadableFile(
                f"{rel} is outside this workspace's monitored files ({', '.join(self.file_globs)})",
                "missing",
            )

    def locate(self, user_path: str | None) -> tuple[Path, str]:
        """Jail a tool's `path` argument: (resolved path, workspace-relative form; '' = root).

        Accepts the root's own absolute path and '.'. Raises PathOutsideWorkspace.
        """
        if user_path is None or user_path.strip() in ("", ".", "./"):
            return self.root, ""
        resolved = resolve_in_root(self.root, user_path.strip())
        rel = relative_to_root(self.root, resolved)
        given = os.path.normpath(user_path.strip())
        if git_internal(str(self.root), rel) or (
            not os.path.isabs(given) and git_internal(str(self.root), given)
        ):
            self.require_visible(rel, given=user_path.strip())  # raises the git refusal
        return resolved, rel

    def files_under(self, rel_dir: str) -> list[str]:
        """Visible workspace files below `rel_dir` ('' = all), sorted, workspace-relative."""
        prefix = f"{rel_dir}/" if rel_dir else ""
        vendored = self.vendored or in_vendored_dir(rel_dir, is_dir=True)
        paths = [
            path
            for path in list_workspace_files(self.root, vendored=vendored)
            if path.startswith(prefix)
        ]
        hidden = self.invisible_paths(paths)
        return [path for path in paths if path not in hidden] if hidden else paths

    def regular_size(self, rel: str) -> int | None:
        """Size of `rel` if it is (or links, inside the root, to) a visible regular file.

        Tools that hand paths to another program (rg) call this first, so it never follows
        a link out of the workspace, to a secret, or into a FIFO that would block it.
        """
        try:
            info = os.lstat(os.path.join(self.root, rel))
            if stat.S_ISLNK(info.st_mode):
                target = resolve_in_root(self.root, rel)
                if not self.visible(relative_to_root(self.root, target)):
                    return None
                info = os.stat(target)
        except (OSError, PathOutsideWorkspace):
            return None
        return info.st_size if stat.S_ISREG(info.st_mode) else None


def _secret_suspects(patterns: tuple[str, ...], paths: Collection[str]) -> set[str]:
    pieces = _secret_pieces(patterns)
    if pieces is None:
        return set(paths)
    joined = "\0".join(paths)
    lowered = joined.lower()
    if len(lowered) != len(joined):  # lower() moved the offsets (rare)
        return set(paths)
    suspects: set[str] = set()
    for piece in pieces:
        found = lowered.find(piece)
        while found >= 0:
            start = joined.rfind("\0", 0, found) + 1
            end = joined.find("\0", found)
            end = end if end >= 0 else len(joined)
            suspects.add(joined[start:end])
            found = lowered.find(piece, end)
    return suspects


@functools.lru_cache(maxsize=32)
def _secret_pieces(patterns: tuple[str, ...]) -> tuple[str, ...] | None:
    """Strings at least one of which occurs in every path that could match `patterns`.

    A path matching an fnmatch pattern contains each literal run of the (lower-cased)
    pattern in its lower-cased form; the longest run per pattern is kept. A backslash is
    suspect too (`is_secret_path` reads it as '/'). None when some pattern has no ASCII
    literal run (`*`, a non-ASCII name): every path must be tested then.
    """
    pieces = {"\\"}
    for pattern in patterns:
        piece = max(_literal_runs(pattern.lower()), key=len, default="")
        if not piece or not piece.isascii():
            return None
        pieces.add(piece)
    # A piece containing another is redundant: the shorter one finds all its paths.
    return tuple(sorted(p for p in pieces if not any(q != p and q in p for q in pieces)))


def _literal_runs(pattern: str) -> list[str]:
    """The runs of plain characters between fnmatch wildcards and `[...]` sets."""
    runs: list[str] = []
    current: list[str] = []
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char in "*?[":
            runs.append("".join(current))
            current = []
            if char == "[":  # skip the set as fnmatch reads it; an unclosed '[' ends the run
                index = _set_end(pattern, index)
            index += 1
            continue
        current.append(char)
        index += 1
    runs.append("".join(current))
    return runs


def _set_end(pattern: str, start: int) -> int:
    """Index of the `]` closing the set opened at `start`, or `start` when it never closes."""
    index = start + 1
    if pattern[index : index + 1] == "!":
        index += 1
    if pattern[index : index + 1] == "]":
        index += 1
    end = pattern.find("]", index)
    return end if end >= 0 else start
