"""Preload globs: configured documents read verbatim, jailed, in a deterministic order, capped."""

from __future__ import annotations

import hashlib
import logging
import os
import subprocess
from pathlib import Path

import pytest

from live_memory.memory.preload import preload
from live_memory.memory.window import Window

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=m"]
CAP = 1024 * 1024


def make_repo(root: Path, files: dict[str, str | bytes]) -> Path:
    root.mkdir(parents=True)
    subprocess.run([*GIT, "init", "-q"], cwd=root, check=True, capture_output=True, timeout=30)
    for rel, body in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(body, bytes):
            path.write_bytes(body)
        else:
            path.write_text(body, encoding="utf-8")
    return root.resolve()


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


DOCS: dict[str, str | bytes] = {
    "docs/c.md": "C" * 10,
    "docs/a.md": "A" * 10,
    "docs/b.md": "B" * 10,
    "README.md": "R" * 10,
    "src/app.py": "print()\n",
}


def loaded(window: Window) -> list[str]:
    return [p for p, f in window.files.items() if f.source == "preloaded"]


def test_matches_load_in_pattern_order_sorted_within_a_pattern_without_duplicates(
    tmp_path: Path,
) -> None:
    root = make_repo(tmp_path / "repo", DOCS)
    window = Window(str(root))
    count = preload(window, root, ["README.md", "docs/*.md", "docs/a.md"], total_cap_bytes=CAP)
    assert count == 4
    assert loaded(window) == ["README.md", "docs/a.md", "docs/b.md", "docs/c.md"]
    ctx = window.files["docs/a.md"]
    assert (ctx.content, ctx.sha256, ctx.size) == ("A" * 10, sha("A" * 10), 10)
    assert ctx.state == "current"


def test_preloading_twice_freezes_the_same_block(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", DOCS)
    blocks = []
    for _ in range(2):
        window = Window(str(root))
        preload(window, root, ["docs/*.md", "README.md"], total_cap_bytes=CAP)
        window.freeze()
        blocks.append(window.frozen)
    assert blocks[0] == blocks[1]
    assert blocks[0] is not None
    assert blocks[0].index("AAAAAAAAAA") < blocks[0].index("BBBBBBBBBB") < blocks[0].index("RRRR")


def test_the_total_cap_keeps_the_earliest_files(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", DOCS)
    window = Window(str(root))
    assert preload(window, root, ["docs/*.md"], total_cap_bytes=25) == 2
    assert loaded(window) == ["docs/a.md", "docs/b.md"]
    window = Window(str(root))
    assert preload(window, root, ["docs/*.md"], total_cap_bytes=30) == 3
    window = Window(str(root))
    assert preload(window, root, ["docs/*.md"], total_cap_bytes=9) == 0
    assert window.files == {}


def test_binary_secret_and_oversize_files_are_skipped(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {
        "docs/a.md": "fine",
        "docs/logo.md": b"\x89PNG\x00\x00\x00\x0dIHDR",
        "docs/.env": "TOKEN=abc\n",
        "docs/server.pem": "-----BEGIN PRIVATE KEY-----\n",
        "docs/huge.md": "H" * 200,
    }
    root = make_repo(tmp_path / "repo", files)
    window = Window(str(root))
    count = preload(window, root, ["docs/*", "docs/.env"], total_cap_bytes=CAP, max_file_bytes=100)
    assert count == 1
    assert list(window.files) == ["docs/a.md"]


def test_a_symlink_escaping_the_root_is_skipped_but_one_inside_is_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "private.md").write_text("PRIVATE", encoding="utf-8")
    root = make_repo(tmp_path / "repo", {"docs/a.md": "A", "notes/real.md": "REAL"})
    os.symlink(outside / "private.md", root / "docs/escape.md")
    os.symlink(root / "notes/real.md", root / "docs/inside.md")
    os.symlink(outside, root / "docs/outdir")
    window = Window(str(root))
    count = preload(window, root, ["docs/*.md", "docs/outdir/*.md"], total_cap_bytes=CAP)
    assert loaded(window) == ["docs/a.md", "docs/inside.md"]
    assert count == 2
    assert window.files["docs/inside.md"].content == "REAL"
    assert all("PRIVATE" not in (f.content or "") for f in window.files.values())


def test_absolute_and_escaping_patterns_are_refused(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "outside.md").write_text("OUT", encoding="utf-8")
    root = make_repo(tmp_path / "repo", DOCS)
    window = Window(str(root))
    with caplog.at_level(logging.WARNING, logger="live_memory.memory.preload"):
        count = preload(
            window,
            root,
            [f"{root}/docs/*.md", "/etc/*", "", "../*.md", "docs/../../*.md"],
            total_cap_bytes=CAP,
        )
    assert count == 0
    assert window.files == {}
    assert "must be workspace-relative" in caplog.text


def test_git_internals_and_directories_are_never_preloaded(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {"docs/a.md": "A"})
    window = Window(str(root))
    preload(window, root, ["**/*", ".git/*", "docs"], total_cap_bytes=CAP)
    assert list(window.files) == ["docs/a.md"]


def test_a_live_tee_of_the_same_file_keeps_its_observed_flag(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", DOCS)
    window = Window(str(root))
    window.observe("docs/a.md", "A" * 10, sha("A" * 10), 10)
    window.observe("docs/b.md", "older", sha("older"), 5)
    preload(window, root, ["docs/*.md"], total_cap_bytes=CAP)
    assert window.files["docs/a.md"].source == "observed"
    assert window.files["docs/b.md"].source == "observed"
    assert window.files["docs/b.md"].content == "B" * 10
    assert window.files["docs/c.md"].source == "preloaded"


def test_no_patterns_load_nothing(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", DOCS)
    window = Window(str(root))
    assert preload(window, root, [], total_cap_bytes=CAP) == 0
    assert window.files == {}


def test_globs_follow_the_listing_so_ignored_trees_are_never_entered(tmp_path: Path) -> None:
    root = make_repo(
        tmp_path / "repo",
        {
            ".gitignore": "node_modules/\n",
            "docs/a.md": "A",
            "docs/deep/b.md": "B",
            "node_modules/pkg/README.md": "N",
            "README.md": "R",
            "sub/README.md": "S",
        },
    )
    window = Window(str(root))
    preload(window, root, ["**/*.md"], total_cap_bytes=CAP)
    assert loaded(window) == ["README.md", "docs/a.md", "docs/deep/b.md", "sub/README.md"]
    # A pattern without '/' is anchored at the root here (the root's README, not every one).
    window = Window(str(root))
    preload(window, root, ["README.md", "{..,x}/y", "**/" * 40 + "nomatch"], total_cap_bytes=CAP)
    assert loaded(window) == ["README.md"]
