"""The git repositories inside one watched root: the root's own and any nested ones
(submodules, vendored clones), each with its ignore rules and its HEAD tracker.

Git applies a repository's rules only inside its own work tree, and a submodule's HEAD moves
on its own, so every event is attributed to the deepest repository that contains it.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

from live_memory.watchers.git_process import run_git
from live_memory.watchers.gitdirs import GitDirs, find_git_dirs
from live_memory.watchers.head import HeadTracker
from live_memory.watchers.ignore import IgnoreRules

__all__ = ["Repo", "RepoSet"]

logger = logging.getLogger(__name__)


def _global_excludes(worktree: str) -> str | None:
    """git's `core.excludesFile`, or its default `$XDG_CONFIG_HOME/git/ignore`."""
    out = run_git(Path(worktree), ["config", "--get", "core.excludesFile"])
    if out is not None and out.returncode == 0 and out.stdout.strip():
        return os.path.expanduser(out.stdout.decode("utf-8", "replace").strip())
    config = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
    return os.path.join(config, "git", "ignore")


def _tracked_ignored(worktree: str) -> list[str]:
    out = run_git(Path(worktree), ["ls-files", "-z", "-c", "-i", "--exclude-standard"])
    return out.paths() if out is not None and out.returncode == 0 else []


@dataclass(slots=True)
class Repo:
    """One repository's work tree inside the root: `prefix` is its root-relative path."""

    prefix: str
    worktree: str
    dirs: GitDirs | None
    rules: IgnoreRules
    head: HeadTracker

    def inner(self, rel: str) -> str:
        """`rel` (root-relative) relative to this repository's work tree."""
        return rel[len(self.prefix) + 1 :] if self.prefix else rel

    def outer(self, inner: str) -> str:
        return f"{self.prefix}/{inner}" if self.prefix else inner

    def refresh_tracked(self) -> None:
        self.rules.set_tracked(_tracked_ignored(self.worktree))


def open_repo(root: str, prefix: str) -> Repo:
    worktree = os.path.join(root, prefix) if prefix else root
    dirs = find_git_dirs(worktree)
    rules = IgnoreRules(
        worktree,
        info_exclude=dirs.info_exclude if dirs is not None else None,
        global_excludes=_global_excludes(worktree) if dirs is not None else None,
        tracked_ignored=_tracked_ignored(worktree) if dirs is not None else (),
    )
    return Repo(prefix, worktree, dirs, rules, HeadTracker(Path(worktree)))


class RepoSet:
    """The root's repository and the nested ones found by the walk."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.repos: dict[str, Repo] = {"": open_repo(root, "")}

    @property
    def top(self) -> Repo:
        return self.repos[""]

    def add(self, prefix: str) -> Repo:
        repo = self.repos.get(prefix)
        if repo is None:
            repo = self.repos[prefix] = open_repo(self.root, prefix)
            logger.debug("%s: nested repository at %s", self.root, prefix)
        return repo

    def owner(self, rel: str) -> Repo:
        """The deepest repository whose work tree holds root-relative `rel`."""
        if len(self.repos) > 1:
            best = self.top
            for prefix, repo in self.repos.items():
                if prefix and len(prefix) > len(best.prefix) and rel.startswith(prefix + "/"):
                    best = repo
            return best
        return self.top

    def ignored(self, rel: str, *, is_dir: bool = False, parent_ok: bool = False) -> bool:
        repo = self.owner(rel)
        inner = repo.inner(rel)
        return bool(inner) and repo.rules.ignored(inner, is_dir=is_dir, parent_ok=parent_ok)
