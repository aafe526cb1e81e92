"""The repository a question set was written for: a private work copy at the pinned commit, and
the freshness changes applied to it (and undone) during a run.

The copy is a `git clone --shared` of the path given with `--repo` (read only: the user's
checkout is never touched), checked out detached at the question set's commit.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from bench.answers.question_set import Change

__all__ = ["FRESH_BRANCH", "apply_change", "git", "undo_change", "work_copy"]

FRESH_BRANCH = "bench-freshness"


def git(repo: Path, *args: str, check: bool = True) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), "-c", "core.quotepath=off", *args],
        check=check,
        capture_output=True,
        text=True,
    )
    return done.stdout


def work_copy(source: Path, commit: str, target: Path) -> Path:
    """A detached checkout of `commit` at `target`, cloned from `source`.

    Raises subprocess.CalledProcessError when `source` is not a git repository or lacks
    `commit` (the question set was written for another history).
    """
    if not target.exists():
        subprocess.run(
            ["git", "clone", "--quiet", "--shared", "--no-checkout", str(source), str(target)],
            check=True,
        )
    git(target, "checkout", "--quiet", "--force", "--detach", commit)
    git(target, "clean", "-fdq")
    return target


def apply_change(repo: Path, change: Change) -> list[Path]:
    """Apply a freshness change; the paths whose content changed (to notify)."""
    path = repo / change.path
    if change.kind == "delete":
        path.unlink()
        return [path]
    text = path.read_text(encoding="utf-8")
    if text.count(change.old) != 1:
        raise ValueError(f"{change.path}: {change.old!r} must occur exactly once")
    if change.kind == "branch":
        git(repo, "checkout", "--quiet", "-B", FRESH_BRANCH)
    path.write_text(text.replace(change.old, change.new), encoding="utf-8")
    if change.kind == "branch":
        git(repo, "-c", "user.name=bench", "-c", "user.email=bench@localhost", "commit",
            "--quiet", "-am", "bench: freshness change")  # fmt: skip
    return [path]


def undo_change(repo: Path, commit: str, change: Change) -> list[Path]:
    """Back to the pinned commit (the paths that changed back, to notify)."""
    git(repo, "checkout", "--quiet", "--force", "--detach", commit)
    return [repo / change.path]
