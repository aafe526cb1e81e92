"""Git's ignore rules for one work tree, parsed once with `pathspec` (no git process per path).

Sources, highest precedence first, as git applies them: the `.gitignore` of the deepest
directory, then shallower ones, then `info/exclude`, then the user's global excludes file.
A path under an ignored directory is ignored whatever later rules say (git never looks
inside an excluded directory), and a tracked file is never ignored: the few tracked files
that match a rule come from one `git ls-files -i` when the rules are (re)built.

`.gitignore` files are loaded as the watcher's walk reaches their directory and reloaded
when an event says one changed; `info/exclude` and the global file are re-read when their
modification time moves.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable

import pathspec

from live_memory.config import constants as C
from live_memory.regular_file import read_regular

__all__ = ["IgnoreRules"]

logger = logging.getLogger(__name__)

GITIGNORE = ".gitignore"


def _spec_from(path: str) -> pathspec.GitIgnoreSpec | None:
    try:
        data = read_regular(path, C.WATCH_IGNORE_FILE_MAX_BYTES)  # a FIFO would block
    except OSError:
        return None
    lines = data.decode("utf-8", "replace").splitlines()
    return pathspec.GitIgnoreSpec.from_lines(lines) if lines else None


def _mtime(path: str | None) -> int | None:
    if path is None:
        return None
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


class IgnoreRules:
    """Answers "is this work-tree-relative path ignored?" from the parsed rule files."""

    def __init__(
        self,
        worktree: str,
        *,
        info_exclude: str | None = None,
        global_excludes: str | None = None,
        tracked_ignored: Iterable[str] = (),
    ) -> None:
        self.worktree = worktree
        self._info_exclude = info_exclude
        self._global = global_excludes
        self._dir_specs: dict[str, pathspec.GitIgnoreSpec] = {}
        self._dir_verdicts: dict[str, bool] = {}
        self._loaded: set[str] = set()
        """Directories whose .gitignore was looked for (by the walk or on first use)."""
        self._base_mtimes: tuple[int | None, int | None] = (-1, -1)  # never read yet
        self._base: tuple[pathspec.GitIgnoreSpec, ...] = ()
        self.set_tracked(tracked_ignored)
        self.refresh_base()

    def set_tracked(self, tracked_ignored: Iterable[str]) -> None:
        """Tracked files that match a rule: never ignored, nor are their directories."""
        self._tracked = frozenset(tracked_ignored)
        keep: set[str] = set()
        for rel in self._tracked:
            parts = rel.split("/")
            keep.update("/".join(parts[:i]) for i in range(1, len(parts)))
        self._keep_dirs = frozenset(keep)
        self._dir_verdicts.clear()

    def refresh_base(self) -> bool:
        """Re-read info/exclude and the global excludes file if they changed; True if so."""
        mtimes = (_mtime(self._info_exclude), _mtime(self._global))
        if mtimes == self._base_mtimes:
            return False
        self._base_mtimes = mtimes
        specs = [_spec_from(p) for p in (self._info_exclude, self._global) if p is not None]
        self._base = tuple(s for s in specs if s is not None)
        self._dir_verdicts.clear()
        return True

    def load_dir(self, rel_dir: str) -> bool:
        """(Re)load `rel_dir/.gitignore` ('' = the top); True when the rules changed."""
        path = os.path.join(self.worktree, rel_dir, GITIGNORE)
        if len(self._loaded) < C.WATCH_IGNORE_CACHE_MAX:
            self._loaded.add(rel_dir)
        spec = _spec_from(path)
        old = self._dir_specs.get(rel_dir)
        if spec is None:
            if old is None:
                return False
            del self._dir_specs[rel_dir]
        elif old is not None and list(old.patterns) == list(spec.patterns):
            return False
        else:
            self._dir_specs[rel_dir] = spec
        self._dir_verdicts.clear()
        return True

    def ignored(self, rel: str, *, is_dir: bool = False, parent_ok: bool = False) -> bool:
        """Is the work-tree-relative POSIX path `rel` ignored (or under an ignored directory)?

        `parent_ok`: the caller knows the parent directory is not ignored (the walk only
        enters such directories), so only `rel` itself is judged.
        """
        if rel in self._tracked:
            return False
        if not parent_ok:
            self._ensure_loaded("")
            end = rel.find("/")
            while end != -1:
                if self._dir_ignored(rel[:end]):
                    return True
                self._ensure_loaded(rel[:end])
                end = rel.find("/", end + 1)
        if is_dir:
            return self._dir_ignored(rel)
        return self._verdict(rel, is_dir=False)

    def _ensure_loaded(self, rel_dir: str) -> None:
        if rel_dir not in self._loaded:
            self.load_dir(rel_dir)

    def _dir_ignored(self, rel_dir: str) -> bool:
        verdict = self._dir_verdicts.get(rel_dir)
        if verdict is None:
            # A directory holding tracked files is walked even if a rule matches it.
            keep = rel_dir in self._keep_dirs
            verdict = not keep and self._verdict(rel_dir, is_dir=True)
            if len(self._dir_verdicts) < C.WATCH_IGNORE_CACHE_MAX:
                self._dir_verdicts[rel_dir] = verdict
        return verdict

    def _verdict(self, rel: str, *, is_dir: bool) -> bool:
        suffix = "/" if is_dir else ""
        # The deepest .gitignore first; only directories that have one are looked at, so a
        # path 10,000 levels deep costs what the rule files are, not what its depth is.
        for base in sorted((b for b in self._dir_specs if _within(rel, b)), key=len, reverse=True):
            sub = rel[len(base) + 1 :] if base else rel
            include = self._dir_specs[base].check_file(sub + suffix).include
            if include is not None:
                return include
        for spec in self._base:
            include = spec.check_file(rel + suffix).include
            if include is not None:
                return include
        return False


def _within(rel: str, base: str) -> bool:
    return not base or (rel.startswith(base) and rel[len(base) : len(base) + 1] == "/")
