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
    assert watched.flush(LATER).changes == [Change("a.py", "unlink"), Change("b.py", "add")]


def test_a_deleted_directory_unlinks_the_tracked_files_it_held(tmp_path: Path) -> None:
    root = repo(tmp_path)
    shutil.rmtree(root / "pkg")
    watched = WatchedRoot(str(root))
    watched.record("deleted", f"{root}/pkg", 0.0, directory=True)
    assert sorted(watched.flush(LATER).changes, key=lambda c: c.path) == [
        Change("pkg/one.py", "unlink"),
        Change("pkg/sub/two.py", "unlink"),
    ]


def test_a_directory_moved_away_unlinks_its_files(tmp_path: Path) -> None:
    root = repo(tmp_path)
    (root / "pkg").rename(tmp_path / "elsewhere")
    watched = WatchedRoot(str(root))
    watched.record("moved", f"{root}/pkg", 0.0, dest=str(tmp_path / "elsewhere"), directory=True)
    assert {c.path for c in watched.flush(LATER).changes} == {"pkg/one.py", "pkg/sub/two.py"}


def test_ignored_files_and_git_internals_yield_nothing(tmp_path: Path) -> None:
    root = repo(tmp_path)
    watched = WatchedRoot(str(root))
    for rel in ("debug.log", ".git/index", ".git/objects/ab/cd", ".git/refs/tags/v1"):
        watched.record("created", f"{root}/{rel}", 0.0)
    assert watched.flush(LATER).changes == []
    assert watched.pending == 0


def test_events_are_released_only_after_the_quiet_period(tmp_path: Path) -> None:
    root = repo(tmp_path)
    watched = WatchedRoot(str(root), quiet_s=0.2)
    watched.record("modified", f"{root}/a.py", 0.0)
    assert watched.flush(0.1).changes == []
    assert watched.next_due() == 0.2
    assert watched.flush(0.2).changes == [Change("a.py", "change")]


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
    assert watched.flush(LATER).changes == [Change("a.py", "change")]


def test_a_watcher_event_wins_over_the_head_diff_for_the_same_path(tmp_path: Path) -> None:
    root = repo(tmp_path)
    watched = WatchedRoot(str(root))
    (root / "a.py").unlink()
    git(root, "commit", "-q", "-am", "drop a")
    (root / "a.py").write_text("back\n", encoding="utf-8")
    watched.record("created", f"{root}/a.py", 0.0)
    watched.record("modified", f"{root}/.git/refs/heads/main", 0.0)
    assert watched.flush(LATER).changes == [Change("a.py", "add")]


def test_a_storm_is_one_revalidation_not_thousands_of_paths(tmp_path: Path) -> None:
    root = repo(tmp_path)
    watched = WatchedRoot(str(root), quiet_s=0.1, storm_paths=100)
    for i in range(500):
        watched.record("created", f"{root}/gen/f{i}.py", 0.0)
    first = watched.flush(1.0)
    assert (first.changes, first.revalidate, first.tree_stale) == ([], True, True)
    assert watched.in_storm
    # While it lasts, at most one re-validation per WATCH_STORM_REVALIDATE_S...
    watched.record("modified", f"{root}/a.py", 1.1)
    assert not watched.flush(1.3).revalidate
    watched.record("modified", f"{root}/a.py", 2.0)
    assert watched.flush(2.2).revalidate
    # ...and one more once it has been quiet.
    due = watched.next_due()
    assert due is not None
    last = watched.flush(due + 0.01)
    assert last.revalidate and not watched.in_storm
    watched.record("modified", f"{root}/a.py", 10.0)
    assert watched.flush(11.0).changes == [Change("a.py", "change")]


def test_a_storm_spread_over_many_flushes_is_still_a_storm(tmp_path: Path) -> None:
    root = repo(tmp_path)
    watched = WatchedRoot(str(root), quiet_s=0.01, storm_paths=100)
    results = []
    for step in range(10):  # 40 paths settle every 0.1 s: 400 per second
        now = step * 0.1
        for i in range(40):
            watched.record("created", f"{root}/gen/s{step}_{i}.py", now)
        results.append(watched.flush(now + 0.05))
    assert sum(len(r.changes) for r in results) <= 100
    assert any(r.revalidate for r in results)


def test_many_added_files_mark_the_tree_stale(tmp_path: Path) -> None:
    root = repo(tmp_path)
    watched = WatchedRoot(str(root), storm_paths=10_000)
    for i in range(600):
        watched.record("created", f"{root}/new/f{i}.py", float(i) * 10)
    flushed = watched.flush(10_000.0)
    assert len(flushed.changes) == 600 and flushed.tree_stale


def test_vendored_directories_are_not_watched_and_their_events_are_dropped(
    tmp_path: Path,
) -> None:
    root = make_repo(
        tmp_path / "v",
        {"src/a.py": "a\n", "node_modules/pkg/i.js": "x\n", ".venv/lib/s.py": "s\n"},
    )  # no .gitignore names them
    watched = WatchedRoot(str(root))
    walked = set(watched.directories())
    assert {"", "src"} <= walked
    assert not {d for d in walked if d.startswith(("node_modules", ".venv"))}
    watched.record("modified", f"{root}/node_modules/pkg/i.js", 0.0)
    watched.record("modified", f"{root}/src/a.py", 0.0)
    assert watched.flush(LATER).changes == [Change("src/a.py", "change")]

    included = WatchedRoot(str(root), vendored=True)
    assert {"node_modules/pkg", ".venv/lib"} <= set(included.directories())
