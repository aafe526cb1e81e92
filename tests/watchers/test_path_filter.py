from __future__ import annotations

import pytest

from live_memory.watchers import HEAD_MARKER, PathFilter

ROOT = "/srv/repo"


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/srv/repo/src/app.py", "src/app.py"),
        ("/srv/repo/./src//app.py", "src/app.py"),
        ("/srv/repo", None),
        ("/srv/repo/", None),
        ("/srv/repo2/app.py", None),
        ("/elsewhere/app.py", None),
        ("/srv/repo/../secret", None),
    ],
)
def test_relative_keeps_only_paths_inside_the_root(path: str, expected: str | None) -> None:
    assert PathFilter(ROOT).relative(path) == expected


@pytest.mark.parametrize(
    "rel",
    [
        ".git",
        ".git/index",
        ".git/index.lock",
        ".git/objects/ab/cdef0123",
        ".git/logs/refs/heads/main",
        ".git/ORIG_HEAD",
        ".git/FETCH_HEAD",
        "vendor/lib/.git/HEAD",
        "vendor/lib/.git/refs/heads/main",
    ],
)
def test_git_internals_are_dropped(rel: str) -> None:
    assert PathFilter(ROOT).classify(f"{ROOT}/{rel}") is None


@pytest.mark.parametrize(
    "rel",
    [
        ".git/HEAD",
        ".git/HEAD.lock",
        ".git/refs/heads/main",
        ".git/refs/heads/feature/x.lock",
        ".git/packed-refs",
        ".git/logs/HEAD",
    ],
)
def test_ref_movements_collapse_onto_the_head_marker(rel: str) -> None:
    assert PathFilter(ROOT).classify(f"{ROOT}/{rel}") == HEAD_MARKER


def test_a_directory_named_like_a_ref_file_is_not_a_ref_movement() -> None:
    assert PathFilter(ROOT).classify(f"{ROOT}/.git/HEAD", directory=True) is None


def test_scope_globs_use_the_one_glob_dialect() -> None:
    scoped = PathFilter(ROOT, ("docs/**/*.md", "*.toml", "notes/*.txt"))
    assert scoped.classify(f"{ROOT}/docs/a/b/guide.md") == "docs/a/b/guide.md"
    assert scoped.classify(f"{ROOT}/notes/a/b.txt") is None  # `*` stays within a directory
    assert scoped.classify(f"{ROOT}/sub/pyproject.toml") == "sub/pyproject.toml"
    assert scoped.classify(f"{ROOT}/src/app.py") is None
    assert scoped.classify(f"{ROOT}/.git/HEAD") == HEAD_MARKER


def test_directories_are_not_scope_checked() -> None:
    assert PathFilter(ROOT, ("docs/*.md",)).classify(f"{ROOT}/src", directory=True) == "src"
