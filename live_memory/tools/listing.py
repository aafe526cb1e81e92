"""The workspace's file set: what every exploration tool and the directory tree agree exists.

In a git work tree it is git's own answer (tracked plus untracked-but-not-ignored files), so
every ignore source git honours is honoured; a submodule's files are listed by its own git
(a checked-out submodule is part of the workspace, not the one "file" git lists it as).
Elsewhere a bounded breadth-first walk applies the `.gitignore` files it finds with git's
semantics (deeper files win, later lines win). Either way vendored and generated directories
(`live_memory.vendored`) are left out unless the caller includes them.
"""

from __future__ import annotations

import logging
import os
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import pathspec

from live_memory.config.constants import (
    DIRECTORY_TREE_MAX_WALK_ENTRIES,
    LISTING_MAX_SUBMODULES,
    LISTING_SUBMODULE_MAX_DEPTH,
    NON_GIT_SKIP_DIRS,
)
from live_memory.errors import GitDirRefused, LiveMemoryError
from live_memory.tools.git_command import GitUnavailable, run_git_concurrently
from live_memory.tools.workspace_read import read_workspace_bytes
from live_memory.vendored import VENDORED_DIRS, without_vendored

__all__ = ["WalkedFiles", "list_workspace_files", "walk_workspace"]

logger = logging.getLogger(__name__)

_GITIGNORE = ".gitignore"
_GITMODULES = ".gitmodules"
_GITIGNORE_MAX_BYTES = 1024 * 1024
_SKIP_WORKTREE = "S"  # `git ls-files -t` tag of a sparse-checkout entry absent from disk
_UNMERGED = "M"  # `git ls-files -t` tag of an unmerged entry (listed once per stage)

_Specs = tuple[tuple[str, pathspec.GitIgnoreSpec], ...]


@dataclass(frozen=True, slots=True)
class WalkedFiles:
    """What the walk outside git found."""

    files: tuple[str, ...]
    """Sorted workspace-relative paths, symlinks included."""
    links: tuple[str, ...]
    """The subset of `files` that are symbolic links (sorted)."""


def list_workspace_files(
    root: Path, *, max_walk_entries: int = DIRECTORY_TREE_MAX_WALK_ENTRIES, vendored: bool = False
) -> list[str]:
    """Sorted workspace-relative POSIX paths of the workspace's files (symlinks included).

    Uses `git ls-files --cached --others --exclude-standard` inside a git work tree (files
    deleted from disk dropped); otherwise walks at most `max_walk_entries` directory entries,
    honouring `.gitignore` files and skipping `.git` and NON_GIT_SKIP_DIRS. Files in vendored
    directories are left out unless `vendored`. Never raises for an unreadable or missing
    root: the listing is then empty.
    """
    real_root = Path(os.path.realpath(root))
    if not real_root.is_dir():
        return []
    listed = _git_files(real_root)
    # An empty answer can also mean the root is a git-ignored directory: walk it then.
    if listed:
        return listed if vendored else without_vendored(listed)
    walked = walk_workspace(real_root, max_walk_entries=max_walk_entries, vendored=vendored)
    return list(walked.files)


def _git_files(root: Path, depth: int = 0) -> list[str] | None:
    try:
        listed, deleted = run_git_concurrently(
            root,
            [
                ["ls-files", "-z", "-t", "--cached", "--others", "--exclude-standard"],
                ["ls-files", "-z", "--deleted"],  # tracked but gone from disk
            ],
        )
    except (GitUnavailable, GitDirRefused) as exc:
        logger.debug("listing %s without git: %s", root, exc)
        return None
    if not listed.ok:
        return None
    text = os.fsdecode(listed.stdout)
    records = text.split("\0")
    records.pop()  # after the last NUL
    if f"\0{_SKIP_WORKTREE} " in f"\0{text}" or "/\0" in text:
        # "x/" is an untracked nested repository, not a file.
        records = [r for r in records if r[0] != _SKIP_WORKTREE and not r.endswith("/")]
    # git prints two sorted runs (untracked, then tracked): sorted() merges them in linear
    # time. An unmerged path (tag M) comes once per stage.
    present = sorted([record[2:] for record in records])
    if f"\0{_UNMERGED} " in f"\0{text}":
        present = list(dict.fromkeys(present))
    if deleted.ok and deleted.stdout:
        gone = set(os.fsdecode(deleted.stdout).split("\0"))
        present = [path for path in present if path not in gone]
    if (root / _GITMODULES).is_file():
        present = _with_submodules(root, present, depth)
    return present


def _submodule_paths(root: Path) -> list[str]:
    """The `path` of every submodule `.gitmodules` declares (reading config runs nothing)."""
    try:
        (result,) = run_git_concurrently(
            root, [["config", "-z", "-f", _GITMODULES, "--get-regexp", r"^submodule\..*\.path$"]]
        )
    except (GitUnavailable, GitDirRefused):
        return []
    if not result.ok:
        return []
    paths = []
    for record in os.fsdecode(result.stdout).split("\0"):
        _, _, value = record.partition("\n")
        value = value.strip().strip("/")
        if value and ".." not in value.split("/"):
            paths.append(value)
    return paths


def _with_submodules(root: Path, present: list[str], depth: int) -> list[str]:
    """Replace each submodule's gitlink entry (which git lists like a file) by the files of
    its work tree, listed by its own git with its own ignore rules; an uninitialised one (no
    `.git` inside) is dropped, it is not a file. Nested submodules down to
    LISTING_SUBMODULE_MAX_DEPTH levels."""
    listed = set(present)
    links = [p for p in _submodule_paths(root) if p in listed]
    if not links:
        return present
    expanded: list[str] = []
    for link in links[:LISTING_MAX_SUBMODULES]:
        sub = root / link
        if depth >= LISTING_SUBMODULE_MAX_DEPTH or not (sub / ".git").exists():
            continue
        inner = _git_files(sub, depth + 1)
        if inner is None:
            continue
        expanded.extend(f"{link}/{path}" for path in inner)
    links_set = set(links)
    return sorted([p for p in present if p not in links_set] + expanded)


def walk_workspace(
    root: Path, *, max_walk_entries: int = DIRECTORY_TREE_MAX_WALK_ENTRIES, vendored: bool = False
) -> WalkedFiles:
    """The listing outside git (see `list_workspace_files`), telling symlinks apart.

    `root` must already be resolved; `vendored=False` does not enter vendored directories.
    Never raises; an unreadable directory is skipped.
    """
    files: list[str] = []
    links: list[str] = []
    visited = 0
    queue: deque[tuple[str, _Specs]] = deque([("", ())])
    while queue:
        rel_dir, specs = queue.popleft()
        try:
            with os.scandir(root / rel_dir if rel_dir else root) as iterator:
                entries = sorted(iterator, key=lambda entry: entry.name)
        except OSError as exc:
            logger.debug("cannot list %s/%s: %s", root, rel_dir, exc)
            continue
        if any(entry.name == _GITIGNORE for entry in entries):
            spec = _load_gitignore(root, f"{rel_dir}/{_GITIGNORE}" if rel_dir else _GITIGNORE)
            if spec is not None:
                specs = (*specs, (rel_dir, spec))
        for entry in entries:
            visited += 1
            if visited > max_walk_entries:
                logger.warning(
                    "workspace %s has more than %d entries; the listing is partial",
                    root,
                    max_walk_entries,
                )
                return WalkedFiles(tuple(sorted(files)), tuple(sorted(links)))
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            is_dir = entry.is_dir(follow_symlinks=False)
            # `.git` may be a file too (worktrees, submodules); it is never workspace content.
            name = entry.name
            skipped = name in NON_GIT_SKIP_DIRS or (not vendored and name in VENDORED_DIRS)
            if name == ".git" or (is_dir and skipped):
                continue
            if _ignored(rel, is_dir, specs):
                continue
            if is_dir:
                queue.append((rel, specs))
            elif entry.is_symlink():
                files.append(rel)
                links.append(rel)
            elif entry.is_file(follow_symlinks=False):
                files.append(rel)  # like git: no FIFOs, sockets or devices
    return WalkedFiles(tuple(sorted(files)), tuple(sorted(links)))


def _load_gitignore(root: Path, rel: str) -> pathspec.GitIgnoreSpec | None:
    try:
        data, _ = read_workspace_bytes(
            root, rel, max_bytes=_GITIGNORE_MAX_BYTES, secret_patterns=()
        )
    except (LiveMemoryError, OSError) as exc:
        logger.debug("ignoring unreadable %s: %s", rel, exc)
        return None
    lines = data.decode("utf-8", errors="replace").splitlines()
    return pathspec.GitIgnoreSpec.from_lines(lines)


def _ignored(rel: str, is_dir: bool, specs: _Specs) -> bool:
    # Deeper .gitignore files override shallower ones, as in git.
    for base, spec in reversed(specs):
        sub = rel[len(base) + 1 :] if base else rel
        verdict = spec.check_file(sub + "/" if is_dir else sub).include
        if verdict is not None:
            return verdict
    return False
