from __future__ import annotations

import shutil
from pathlib import Path

from live_memory.watchers import Change, WatchedRoot
from tests.support.repo import git, make_repo

LATER = 10.0


def repo(tmp_path: Path) -> Path:
    return make_repo(
        tmp_path / "repo",
        {
            ".gitignore": "*.log\n",
            "a.py": "a\n",
            "docs/guide.md": "g\n",
            "pkg/one.py": "1\n",
            "pkg/sub/two.py": "2\n",
        },
    )


def test_a_move_is_an_unlink_of_the_source_and_an_add_of_the_target(tmp_path: Path) -> None:
    root = repo(tmp_path)
    watched = WatchedRoot(str(root))
    watched.record("moved", f"{root}/a.py", 0.0, dest=f"{root}/b.py")
    assert watched.flush(LATER) == [Change("a.py", "unlink"), Change("b.py", "add")]


def test_a_deleted_directory_unlinks_the_tracked_files_it_held(tmp_path: Path) -> None:
    root = repo(tmp_path)
    shutil.rmtree(root / "pkg")
    watched = WatchedRoot(str(root))
    watched.record("deleted", f"{root}/pkg", 0.0, directory=True)
    assert sorted(watched.flush(LATER), key=lambda c: c.path) == [
        Change("pkg/one.py", "unlink"),
        Change("pkg/sub/two.py", "unlink"),
    ]


def test_a_directory_moved_away_unlinks_its_files(tmp_path: Path) -> None:
    root = repo(tmp_path)
    (root / "pkg").rename(tmp_path / "elsewhere")
    watched = WatchedRoot(str(root))
    watched.record("moved", f"{root}/pkg", 0.0, dest=str(tmp_path / "elsewhere"), directory=True)
    assert {c.path for c in watched.flush(LATER)} == {"pkg/one.py", "pkg/sub/two.py"}


def test_ignored_files_and_git_internals_yield_nothing(tmp_path: Path) -> None:
    root = repo(tmp_path)
    watched = WatchedRoot(str(root))
    for rel in ("debug.log", ".git/index", ".git/objects/ab/cd", ".git/refs/tags/v1"):
        watched.record("created", f"{root}/{rel}", 0.0)
    assert watched.flush(LATER) == []
    assert watched.pending == 0


def test_events_are_released_only_after_the_quiet_period(tmp_path: Path) -> None:
    root = repo(tmp_path)
    watched = WatchedRoot(str(root), quiet_s=0.2)
    watched.record("modified", f"{root}/a.py", 0.0)
    assert watched.flush(0.1) == []
    assert watched.next_due() == 0.2
    assert watched.flush(0.2) == [Change("a.py", "change")]


def test_a_head_move_adds_the_files_that_changed_between_the_commits(tmp_path: Path) -> None:
    root = repo(tmp_path)
    watched = WatchedRoot(str(root), file_globs=("*.py",))
    git(root, "checkout", "-q", "-b", "other")
    (root / "a.py").write_text("a2\n", encoding="utf-8")
    (root / "docs/guide.md").write_text("g2\n", encoding="utf-8")
    git(root, "commit", "-q", "-am", "edit")
    watched.record("created", f"{root}/.git/refs/heads/other.lock", 0.0)
    watched.record("moved", f"{root}/.git/HEAD.lock", 0.0, dest=f"{root}/.git/HEAD")
    # Out-of-scope docs/guide.md stays out even though the commit changed it.
    assert watched.flush(LATER) == [Change("a.py", "change")]


def test_a_watcher_event_wins_over_the_head_diff_for_the_same_path(tmp_path: Path) -> None:
    root = repo(tmp_path)
    watched = WatchedRoot(str(root))
    (root / "a.py").unlink()
    git(root, "commit", "-q", "-am", "drop a")
    (root / "a.py").write_text("back\n", encoding="utf-8")
    watched.record("created", f"{root}/a.py", 0.0)
    watched.record("modified", f"{root}/.git/refs/heads/main", 0.0)
    assert watched.flush(LATER) == [Change("a.py", "add")]
