"""Ignore decisions from the parsed rule files, checked against git's own answer."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from live_memory.watchers import WatchedRoot
from live_memory.watchers.ignore import IgnoreRules
from live_memory.watchers.repos import RepoSet
from tests.support.fifo import plant_fifo, without_blocking
from tests.support.repo import git, make_repo

PATHS = [
    "src/app.py",
    "debug.log",
    "keep.log",
    "tracked.log",
    "build/out.txt",
    "build/gone/deep.txt",
    "src/generated_parser.py",
    "src/deep/er/generated_x.py",
    "local.secret",
    "notes.tmp",
    "new file with spaces.py",
    "vendor/lib/inner.gen",
    "vendor/lib/ok.py",
]


@pytest.fixture(autouse=True)
def isolated_git_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    (home / ".config" / "git").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    (home / ".config" / "git" / "ignore").write_text("*.tmp\n", encoding="utf-8")
    return home


def _repo(tmp_path: Path) -> Path:
    root = make_repo(
        tmp_path / "repo",
        {
            ".gitignore": "build/\n*.log\n!keep.log\n",
            "src/.gitignore": "generated_*.py\n",
            "src/app.py": "x = 1\n",
        },
    )
    (root / "tracked.log").write_text("forced in\n", encoding="utf-8")
    git(root, "add", "-f", "tracked.log")
    git(root, "commit", "-q", "-m", "track a log")
    (root / ".git" / "info").mkdir(exist_ok=True)
    (root / ".git" / "info" / "exclude").write_text("*.secret\n", encoding="utf-8")
    nested = make_repo(root / "vendor" / "lib", {".gitignore": "*.gen\n", "ok.py": "1\n"})
    assert nested.is_dir()
    return root


def _git_ignored(root: Path, paths: list[str]) -> set[str]:
    done = subprocess.run(
        ["git", "-C", str(root), "check-ignore", "--stdin"],
        input="\n".join(p for p in paths if not p.startswith("vendor/")),
        capture_output=True,
        text=True,
        check=False,
    )
    nested = subprocess.run(
        ["git", "-C", str(root / "vendor" / "lib"), "check-ignore", "--stdin"],
        input="\n".join(p[len("vendor/lib/") :] for p in paths if p.startswith("vendor/lib/")),
        capture_output=True,
        text=True,
        check=False,
    )
    return set(done.stdout.split()) | {f"vendor/lib/{p}" for p in nested.stdout.split()}


def _walked(root: Path) -> RepoSet:

    watched = WatchedRoot(str(root))
    list(watched.directories())  # loads every .gitignore and finds nested repositories
    return watched.repos


def test_verdicts_match_git_check_ignore(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    repos = _walked(root)
    ours = {p for p in PATHS if repos.ignored(p)}
    assert ours == _git_ignored(root, PATHS)
    assert "tracked.log" not in ours  # tracked files are never ignored
    assert {"notes.tmp", "local.secret", "vendor/lib/inner.gen"} <= ours


def test_an_ignored_directory_is_not_walked(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    (root / "build" / "sub").mkdir(parents=True)

    walked = list(WatchedRoot(str(root)).directories())
    assert "build" not in walked and "build/sub" not in walked
    assert {"", "src", "vendor", "vendor/lib"} <= set(walked)


def test_edited_rule_files_are_reloaded(tmp_path: Path) -> None:

    root = _repo(tmp_path)
    watched = WatchedRoot(str(root))
    list(watched.directories())
    assert not watched.repos.ignored("src/app.py")
    (root / "src" / ".gitignore").write_text("app.py\n", encoding="utf-8")
    assert watched.rules_file_changed("src/.gitignore")
    assert watched.repos.ignored("src/other/app.py")
    exclude = root / ".git" / "info" / "exclude"
    exclude.write_text("*.py\n", encoding="utf-8")
    assert watched.repos.top.rules.refresh_base()
    assert watched.repos.ignored("new file with spaces.py")


def test_fifo_rule_files_are_skipped_without_blocking(tmp_path: Path) -> None:
    # git itself is not asked here: it blocks on such a FIFO until its deadline kills it
    # (gateway/test_watcher_health.py runs the whole watcher against one).
    root = _repo(tmp_path)
    fifos = (
        plant_fifo(root / "src" / ".gitignore"),
        plant_fifo(root / ".git" / "info" / "exclude"),
    )
    rules = without_blocking(lambda: IgnoreRules(str(root), info_exclude=str(fifos[1])), *fifos)
    assert not without_blocking(lambda: rules.load_dir("src"), *fifos)  # no rules from it
    assert without_blocking(lambda: rules.ignored("debug.log"), *fifos)  # the top's still hold
