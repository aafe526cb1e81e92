"""git's part of a ripgrep walk: measured with index-only queries, reused until inputs change."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from live_memory.config.constants import DEFAULT_SECRET_PATH_PATTERNS
from live_memory.tools import ripgrep
from live_memory.tools.arguments import ToolArgs
from live_memory.tools.grep import run_grep
from live_memory.tools.ripgrep import RipgrepEngine, find_ripgrep
from live_memory.tools.scope import Scope
from live_memory.tools.walk_correction import CorrectionCache, WalkCorrection, correct_walk
from tests.support.repo import git, make_repo
from tests.tools.conftest import write_tree


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "repo", {"a.py": "TODO a\n", "sub/b.py": "TODO b\n"})
    write_tree(root, {"vendor/v.py": "TODO vendored\n", ".gitignore": "vendor/\n"})
    git(root, "add", "-f", "vendor/v.py")
    git(root, "update-index", "--skip-worktree", "a.py")
    return root


def test_correction_lists_tracked_ignored_and_skip_worktree_files(repo: Path) -> None:
    correction = correct_walk(repo, "")
    assert correction.in_git
    assert correction.unseen == ("vendor/v.py",)
    assert correction.hidden == frozenset({"a.py"})
    assert not correction.target_unlisted
    assert correction.index is not None and Path(correction.index).is_file()
    assert correct_walk(repo, "vendor").target_unlisted
    assert not correct_walk(repo, "sub").target_unlisted


def test_correction_outside_git_is_the_listing_walk(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "plain", {"a.py": "", "b.log": "", ".gitignore": "*.log\n"})
    (root / "link.py").symlink_to("a.py")
    correction = correct_walk(root, "")
    assert not correction.in_git
    assert correction.listed == frozenset({".gitignore", "a.py", "link.py"})
    assert correction.unseen == ("link.py",)
    assert not correction.keeps("b.log")


def test_cache_entry_lives_until_the_index_or_an_ignore_file_changes(repo: Path) -> None:
    cache = CorrectionCache(racy_seconds=0.0)
    correction = correct_walk(repo, "")
    ignore_files = {str(repo / ".gitignore")}
    started = time.time()
    assert cache.lookup(repo, "") is None
    cache.store(repo, "", correction, ignore_files, started=started)
    assert cache.lookup(repo, "") == (correction, frozenset(ignore_files))
    assert cache.lookup(repo, "sub") is None
    (repo / ".gitignore").write_text("vendor/\n*.tmp\n", encoding="utf-8")
    assert cache.lookup(repo, "") is None
    cache.store(repo, "", correction, ignore_files, started=time.time())
    git(repo, "add", "sub/b.py")  # rewrites the index
    assert cache.lookup(repo, "") is None


def test_cache_does_not_store_an_answer_older_than_its_inputs(repo: Path) -> None:
    cache = CorrectionCache()  # files written within the last second are not trusted
    cache.store(repo, "", correct_walk(repo, ""), [], started=time.time())
    assert cache.lookup(repo, "") is None
    outside = WalkCorrection(in_git=False, listed=frozenset())
    cache.store(repo, "", outside, [], started=time.time() + 60)
    assert cache.lookup(repo, "") is None


def test_engine_reuses_git_answers_and_notices_new_ignore_files(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []

    def counted(root: Path, rel_dir: str) -> WalkCorrection:
        calls.append(rel_dir)
        return correct_walk(root, rel_dir)

    monkeypatch.setattr(ripgrep, "correct_walk", counted)
    binary = find_ripgrep()
    assert binary is not None
    engine = RipgrepEngine(binary, corrections=CorrectionCache(racy_seconds=0.0))
    scope = Scope(root=repo.resolve(), secret_patterns=DEFAULT_SECRET_PATH_PATTERNS, file_globs=())

    def grep() -> str:
        return run_grep(scope, ToolArgs("Grep", {"pattern": "todo"}), engine=engine).text

    assert grep() == "Found 2 files\nsub/b.py\nvendor/v.py"
    assert grep() == "Found 2 files\nsub/b.py\nvendor/v.py"
    assert calls == [""]
    # A new ignore file hides the tracked sub/b.py from ripgrep; git still lists it.
    (repo / "sub" / ".gitignore").write_text("b.py\n", encoding="utf-8")
    assert grep() == "Found 2 files\nsub/b.py\nvendor/v.py"
    assert calls == ["", ""]
    git(repo, "update-index", "--no-skip-worktree", "a.py")
    assert grep() == "Found 3 files\na.py\nsub/b.py\nvendor/v.py"
    assert calls == ["", "", ""]
