"""ripgrep walks the tree itself; its answers must still be the listing's, file for file.

Each case is one way a plain `rg` walk differs from the workspace listing (tracked files that
match an ignore rule, skip-worktree entries, nested repositories, symlinks, late NUL bytes,
`.ignore` files, big files); both engines must agree with each other and with what we expect.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import pytest

from live_memory.config.constants import GREP_MAX_FILE_BYTES
from live_memory.tools import Toolbox
from tests.support.repo import git, make_repo
from tests.tools.conftest import write_tree

LATE_NUL = "TODO first\n" + "x" * 9000 + "\n\0 TODO after the NUL\n"  # NUL past the sniff
FAR_NUL = "TODO first\n" + ("y" * 99 + "\n") * 800 + "\0 TODO far\n"  # NUL past rg's 64 KiB
EARLY_NUL = "TODO early\n" + "z" * 100 + "\0\n"

BASE_FILES: Mapping[str, str] = {
    ".gitignore": "vendor/\n*.log\n",
    "src/app.py": "# TODO: ship it\nprint('hi')\n",
    "src/notes.md": "todo in markdown\n",
    "sparse.txt": "TODO in a skip-worktree file\n",
    ".ignore": "*.md\n",  # ripgrep's own ignore file; git (and so the listing) ignores it
    ".hidden/conf.txt": "TODO hidden\n",
    "late_nul.txt": LATE_NUL,
    "far_nul.txt": FAR_NUL,
    "early_nul.txt": EARLY_NUL,
}
EXPECTED_GIT = [
    ".hidden/conf.txt",
    "far_nul.txt",
    "late_nul.txt",
    "latin1.txt",
    "link_to_app.py",
    "link_to_vendor.py",
    "src/app.py",
    "src/notes.md",
    "vendor/lib.py",
]


def _add_specials(root: Path, outside: Path) -> None:
    (root / "utf16.txt").write_bytes("\ufeffTODO in UTF-16\n".encode("utf-16-le"))
    (root / "latin1.txt").write_bytes("TODO résumé à côté ÉÀÈ\n".encode("latin-1") * 3)
    big = b"TODO big\n" + b"b" * GREP_MAX_FILE_BYTES
    (root / "big.txt").write_bytes(big)
    outside.mkdir(parents=True, exist_ok=True)
    (outside / "far.txt").write_text("TODO outside\n", encoding="utf-8")
    os.symlink("src/app.py", root / "link_to_app.py")
    os.symlink("vendor/lib.py", root / "link_to_vendor.py")
    os.symlink("src", root / "link_to_dir")
    os.symlink("missing.py", root / "dangling.py")
    os.symlink(outside / "far.txt", root / "link_out.txt")
    os.symlink("link_out.txt", root / "chain_out.txt")


@pytest.fixture(scope="module")
def git_walk_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("walk")
    root = make_repo(base / "repo", BASE_FILES)
    (root / "vendor").mkdir()
    (root / "vendor" / "lib.py").write_text("TODO tracked though ignored\n", encoding="utf-8")
    (root / "vendor" / "extra.py").write_text("TODO ignored, untracked\n", encoding="utf-8")
    (root / "debug.log").write_text("TODO ignored log\n", encoding="utf-8")
    git(root, "add", "-f", "vendor/lib.py")
    git(root, "commit", "-q", "-m", "vendored")
    git(root, "update-index", "--skip-worktree", "sparse.txt")
    nested = root / "nested"
    (nested / "sub").mkdir(parents=True)
    git(nested, "init", "-q")
    (nested / "x.py").write_text("TODO in a nested repository\n", encoding="utf-8")
    (nested / "sub" / "y.py").write_text("TODO deeper in it\n", encoding="utf-8")
    _add_specials(root, base / "outside")
    return root


@pytest.fixture(scope="module")
def plain_walk_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("walk-plain")
    root = write_tree(base / "plain", BASE_FILES)
    write_tree(root, {"vendor/lib.py": "TODO ignored here\n", "nested/x.py": "TODO listed\n"})
    (root / "nested" / ".git").mkdir()
    (root / "node_modules" / "pkg").mkdir(parents=True)
    (root / "node_modules" / "pkg" / "index.js").write_text("// TODO skipped\n", encoding="utf-8")
    _add_specials(root, base / "outside")
    return root


def _both(root: Path, arguments: dict[str, object], file_globs: tuple[str, ...] = ()) -> str:
    fast = Toolbox(root, file_globs=file_globs)
    slow = Toolbox(root, file_globs=file_globs, use_ripgrep=False)
    assert (fast.grep_engine, slow.grep_engine) == ("ripgrep", "python")
    first, second = fast.run("Grep", arguments), slow.run("Grep", arguments)
    assert first.is_error == second.is_error
    assert first.text == second.text, arguments
    return first.text


def _paths(text: str) -> list[str]:
    return [line for line in text.split("\n") if line and not line.startswith(("Found", "["))]


def test_grep_searches_exactly_the_listed_text_files_of_a_git_repository(
    git_walk_root: Path,
) -> None:
    text = _both(git_walk_root, {"pattern": "todo", "head_limit": 0})
    assert _paths(text) == EXPECTED_GIT


@pytest.mark.parametrize("mode", ["files_with_matches", "count", "content"])
@pytest.mark.parametrize("pattern", ["todo", "TODO (after|far)", "^TODO", "résumé|^\\w+ r"])
def test_both_engines_agree_on_every_walk_difference(
    git_walk_root: Path, plain_walk_root: Path, mode: str, pattern: str
) -> None:
    for root in (git_walk_root, plain_walk_root):
        _both(root, {"pattern": pattern, "output_mode": mode, "-i": False, "head_limit": 0})


def test_a_nul_byte_after_the_sniffed_prefix_does_not_make_a_file_binary(
    git_walk_root: Path,
) -> None:
    text = _both(git_walk_root, {"pattern": "TODO", "output_mode": "count", "-i": False})
    counts = dict(line.rsplit(":", 1) for line in _paths(text))
    assert counts["late_nul.txt"] == "2"
    assert counts["far_nul.txt"] == "2"
    assert "early_nul.txt" not in counts
    assert "utf16.txt" not in counts


def test_grep_in_an_ignored_directory_finds_only_its_tracked_files(git_walk_root: Path) -> None:
    text = _both(git_walk_root, {"pattern": "todo", "path": "vendor", "output_mode": "content"})
    assert text == "vendor/lib.py:1:TODO tracked though ignored"


@pytest.mark.parametrize("path", ["nested", "nested/sub"])
def test_grep_inside_a_nested_repository_finds_nothing(git_walk_root: Path, path: str) -> None:
    text = _both(git_walk_root, {"pattern": "todo", "path": path})
    assert text.startswith("No matches")


def test_grep_walk_outside_git_honours_gitignore_and_skipped_directories(
    plain_walk_root: Path,
) -> None:
    text = _both(plain_walk_root, {"pattern": "todo", "head_limit": 0})
    found = _paths(text)
    assert "nested/x.py" in found
    assert "src/notes.md" in found  # `.ignore` is not a git ignore file
    for hidden in ("vendor/lib.py", "node_modules/pkg/index.js", "big.txt", "link_out.txt"):
        assert hidden not in found


def test_grep_globs_paths_and_scope_agree_on_a_walked_tree(git_walk_root: Path) -> None:
    _both(git_walk_root, {"pattern": "todo", "glob": "*.py", "output_mode": "count"})
    _both(git_walk_root, {"pattern": "todo", "glob": "!src/**", "head_limit": 3})
    _both(git_walk_root, {"pattern": "todo", "path": "src", "output_mode": "content"})
    scoped = _both(git_walk_root, {"pattern": "todo"}, file_globs=("src/*", "vendor/*"))
    assert _paths(scoped) == ["src/app.py", "src/notes.md", "vendor/lib.py"]


def test_latin1_text_is_searched_and_shown_with_replacement_characters(
    git_walk_root: Path,
) -> None:
    # (A `.` next to an invalid byte is where the engines part: Python's `re` sees U+FFFD,
    # ripgrep a byte no Unicode class matches. So the pattern stays on valid text.)
    text = _both(git_walk_root, {"pattern": "TODO r", "output_mode": "content", "-i": False})
    assert (
        text.split("\n")[0]
        == "latin1.txt:1:TODO r\ufffdsum\ufffd \ufffd c\ufffdt\ufffd \ufffd\ufffd\ufffd"
    )
