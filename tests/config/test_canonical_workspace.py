"""cwd -> workspace root: validation, symlinks, git roots (.git dir or file), nearest/outermost."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from live_memory.config import Settings, canonical_workspace, load_settings
from live_memory.config.canonical import refuse_broad_root
from live_memory.errors import InvalidCwd, RefusedRoot

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=m"]


def git(*args: str, cwd: Path) -> None:
    subprocess.run([*GIT, *args], cwd=cwd, check=True, capture_output=True, timeout=30)


def git_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git("init", "-q", cwd=path)
    return path.resolve()


def test_subdirectory_resolves_to_repo_root(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    sub = repo / "src" / "pkg"
    sub.mkdir(parents=True)
    assert canonical_workspace(str(sub)) == repo
    assert canonical_workspace(str(repo)) == repo


def test_canonicalize_off_returns_the_resolved_cwd(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    (repo / "src").mkdir()
    assert canonical_workspace(str(repo / "src"), canonicalize=False) == repo / "src"


def test_non_git_directory_is_its_own_workspace(tmp_path: Path) -> None:
    plain = tmp_path / "plain" / "dir"
    plain.mkdir(parents=True)
    assert canonical_workspace(str(plain)) == plain.resolve()


def test_git_file_of_a_worktree_marks_a_repo_root(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    git("commit", "-q", "--allow-empty", "-m", "init", cwd=repo)
    git("worktree", "add", "-q", str(tmp_path / "wt"), cwd=repo)
    worktree = (tmp_path / "wt").resolve()
    assert (worktree / ".git").is_file()
    (worktree / "deep").mkdir()
    assert canonical_workspace(str(worktree / "deep")) == worktree


def test_nested_repo_nearest_versus_outermost(tmp_path: Path) -> None:
    outer = git_repo(tmp_path / "outer")
    inner = git_repo(outer / "vendor" / "inner")
    (inner / "lib").mkdir()
    assert canonical_workspace(str(inner / "lib")) == inner
    assert canonical_workspace(str(inner / "lib"), mode="nearest") == inner
    assert canonical_workspace(str(inner / "lib"), mode="outermost") == outer
    assert canonical_workspace(str(outer / "vendor"), mode="outermost") == outer


def test_symlinked_directory_resolves_to_the_real_repo(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    (repo / "src").mkdir()
    link = tmp_path / "link"
    link.symlink_to(repo / "src", target_is_directory=True)
    assert canonical_workspace(str(link)) == repo
    assert canonical_workspace(str(link), canonicalize=False) == repo / "src"


def test_relative_cwd_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidCwd, match="must be an absolute path"):
        canonical_workspace("src/pkg")
    with pytest.raises(InvalidCwd, match="must be an absolute path"):
        canonical_workspace("~/project")


def test_empty_cwd_is_refused() -> None:
    with pytest.raises(InvalidCwd, match="cwd is empty"):
        canonical_workspace("")


def test_missing_cwd_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidCwd, match="does not exist"):
        canonical_workspace(str(tmp_path / "missing"))


def test_file_instead_of_directory_is_refused(tmp_path: Path) -> None:
    file = tmp_path / "file.txt"
    file.write_text("x", encoding="utf-8")
    with pytest.raises(InvalidCwd, match="not a directory"):
        canonical_workspace(str(file))
    with pytest.raises(InvalidCwd, match="not a directory"):
        canonical_workspace(str(file / "below"))


def test_nul_byte_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidCwd, match="NUL byte"):
        canonical_workspace(f"{tmp_path}\x00/etc")


def test_broken_symlink_is_refused_as_missing(tmp_path: Path) -> None:
    link = tmp_path / "dangling"
    link.symlink_to(tmp_path / "gone")
    with pytest.raises(InvalidCwd, match="does not exist"):
        canonical_workspace(str(link))


def test_a_root_that_is_slash_a_home_or_above_one_is_refused_naming_the_setting(
    tmp_path: Path,
) -> None:
    home = (tmp_path / "home").resolve()
    (home / "project").mkdir(parents=True)
    settings = load_settings({"HOME": str(home)})
    for cwd in ("/", str(home), str(tmp_path)):
        with pytest.raises(RefusedRoot, match="LIVE_MEMORY_ALLOWED_ROOTS"):
            canonical_workspace(cwd, settings)
    assert canonical_workspace(str(home / "project"), settings) == home / "project"
    # A repository at the home directory makes every directory below it that root.
    (home / ".git").mkdir()
    with pytest.raises(RefusedRoot, match=f"{home} is a home directory"):
        canonical_workspace(str(home / "project"), settings)
    # Anyone's home, without touching the disk: /root, /home/*, /Users/* and above them.
    for root in ("/root", "/home/alice", "/Users/bob", "/home", "/Users"):
        with pytest.raises(RefusedRoot):
            refuse_broad_root(Path(root), Settings())
    refuse_broad_root(Path("/home/alice/src"), Settings())


def test_the_allow_list_lets_a_named_broad_root_be_served(tmp_path: Path) -> None:
    home = (tmp_path / "home").resolve()
    home.mkdir()
    environ = {"HOME": str(home), "LIVE_MEMORY_ALLOWED_ROOTS": "~, /"}
    settings = load_settings(environ)
    assert settings.allowed_roots == (str(home), "/")
    assert canonical_workspace(str(home), settings) == home
    assert canonical_workspace("/", settings) == Path("/")
    with pytest.raises(RefusedRoot):  # named roots only, not what lies above them
        canonical_workspace(str(tmp_path), settings)
