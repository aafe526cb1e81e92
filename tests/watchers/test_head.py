from __future__ import annotations

from pathlib import Path

from live_memory.watchers import Change, HeadTracker
from tests.support.repo import git, make_repo


def branched_repo(tmp_path: Path) -> Path:
    """main: a.py, b.py, same.py; other: a.py edited, b.py deleted, c.py added."""
    root = make_repo(tmp_path / "repo", {"a.py": "a = 1\n", "b.py": "b\n", "same.py": "s\n"})
    git(root, "checkout", "-q", "-b", "other")
    (root / "a.py").write_text("a = 2\n", encoding="utf-8")
    (root / "b.py").unlink()
    (root / "c.py").write_text("c\n", encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "other")
    git(root, "checkout", "-q", "main")
    return root


def test_a_branch_switch_reports_every_file_that_differs(tmp_path: Path) -> None:
    root = branched_repo(tmp_path)
    head = HeadTracker(root)
    git(root, "checkout", "-q", "other")
    assert sorted(head.moved(), key=lambda c: c.path) == [
        Change("a.py", "change"),
        Change("b.py", "unlink"),
        Change("c.py", "change"),
    ]
    git(root, "checkout", "-q", "main")
    assert sorted(head.moved(), key=lambda c: c.path) == [
        Change("a.py", "change"),
        Change("b.py", "change"),
        Change("c.py", "unlink"),
    ]


def test_a_commit_reports_the_committed_files(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {"a.py": "a\n", "b.py": "b\n"})
    head = HeadTracker(root)
    (root / "b.py").write_text("b2\n", encoding="utf-8")
    git(root, "commit", "-q", "-am", "edit b")
    assert head.moved() == [Change("b.py", "change")]


def test_an_unmoved_head_reports_nothing(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {"a.py": "a\n"})
    head = HeadTracker(root)
    git(root, "checkout", "-q", "-b", "same-commit")
    git(root, "tag", "v1")
    assert head.moved() == []


def test_the_first_commit_of_an_unborn_branch_is_remembered_not_reported(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    head = HeadTracker(root)
    assert head.commit is None
    (root / "a.py").write_text("a\n", encoding="utf-8")
    git(root, "add", "a.py")
    git(root, "-c", "user.email=d@example.com", "-c", "user.name=D", "commit", "-q", "-m", "i")
    assert head.moved() == []
    assert head.commit is not None


def test_a_plain_directory_has_no_head(tmp_path: Path) -> None:
    head = HeadTracker(tmp_path)
    assert head.commit is None
    assert head.moved() == []
