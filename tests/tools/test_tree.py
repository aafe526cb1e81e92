from __future__ import annotations

import os
from pathlib import Path

from live_memory.tools import Toolbox, build_directory_tree, list_workspace_files
from live_memory.tools.tree import render_tree
from tests.support.repo import git, make_repo
from tests.tools.conftest import write_tree

EXPECTED_FILES = [
    ".env",
    ".gitignore",
    "README.md",
    "assets/logo.bin",
    "deploy/server.pem",
    "docs/bom.txt",
    "docs/guide.md",
    "docs/windows.txt",
    "env_link.txt",
    "keep.log",
    "link_in.md",
    "link_out.txt",
    "long/line.txt",
    "notes/empty.txt",
    "src/app.py",
    "src/config.py",
    "src/util/.gitignore",
    "src/util/strings.py",
]


def test_git_listing_has_tracked_and_untracked_files_but_not_ignored_ones(shared_git: Path) -> None:
    assert list_workspace_files(shared_git) == EXPECTED_FILES


def test_plain_listing_honours_nested_gitignores_like_git(shared_plain: Path) -> None:
    assert list_workspace_files(shared_plain) == EXPECTED_FILES


def test_git_listing_drops_files_deleted_from_disk_and_nested_repositories(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"a.py": "a\n", "b.py": "b\n"})
    (root / "b.py").unlink()
    nested = root / "vendor" / "lib"
    nested.mkdir(parents=True)
    git(nested, "init", "-q")
    (nested / "x.py").write_text("x\n", encoding="utf-8")
    assert list_workspace_files(root) == ["a.py"]


def test_plain_listing_skips_vcs_and_dependency_directories(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path / "w",
        {
            "main.py": "",
            ".git/config": "",
            "node_modules/pkg/index.js": "",
            "sub/.git": "gitdir: x",
            "sub/code.py": "",
        },
    )
    assert list_workspace_files(root) == ["main.py", "sub/code.py"]


def test_plain_listing_is_bounded_by_max_walk_entries(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "w", {f"d{i}/f{j}.txt": "" for i in range(5) for j in range(20)})
    listed = list_workspace_files(root, max_walk_entries=30)
    assert 0 < len(listed) < 30


def test_listing_of_a_missing_root_is_empty(tmp_path: Path) -> None:
    assert list_workspace_files(tmp_path / "missing") == []


def test_plain_listing_does_not_follow_directory_symlinks(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "w", {"a.py": ""})
    outside = write_tree(tmp_path / "o", {"secret.py": ""})
    os.symlink(outside, root / "linked")
    assert list_workspace_files(root) == ["a.py", "linked"]


def test_tree_is_indented_directories_first_and_hides_secrets(shared_git: Path) -> None:
    tree = build_directory_tree(shared_git, 10_000)
    assert tree.split("\n") == [
        "assets/",
        "  logo.bin",
        "docs/",
        "  bom.txt",
        "  guide.md",
        "  windows.txt",
        "long/",
        "  line.txt",
        "notes/",
        "  empty.txt",
        "src/",
        "  util/",
        "    .gitignore",
        "    strings.py",
        "  app.py",
        "  config.py",
        ".gitignore",
        "README.md",
        "env_link.txt",
        "keep.log",
        "link_in.md",
        "link_out.txt",
    ]


def test_tree_is_the_same_for_git_and_plain_workspaces(
    shared_git: Path, shared_plain: Path
) -> None:
    assert build_directory_tree(shared_git, 5000) == build_directory_tree(shared_plain, 5000)


def test_tree_collapses_single_child_directory_chains() -> None:
    assert render_tree(
        ["src/main/java/com/acme/App.java", "src/main/java/com/acme/Util.java"], 1000
    ) == ("src/main/java/com/acme/\n  App.java\n  Util.java")


def test_tree_over_budget_summarises_deep_directories_and_counts_what_is_missing() -> None:
    files = [f"pkg{i}/mod{j}/file{k}.py" for i in range(3) for j in range(4) for k in range(10)]
    tree = render_tree(files, 400)
    assert len(tree) <= 400
    assert "pkg0/" in tree and "pkg2/" in tree  # every top-level directory is still visible
    assert "[tree truncated: " in tree
    shown = sum(1 for line in tree.split("\n") if line.strip().endswith(".py"))
    assert f"{len(files) - shown} of {len(files)} files not listed" in tree


def test_tree_cuts_the_top_level_when_even_that_does_not_fit() -> None:
    files = [f"file_{i:04d}.txt" for i in range(500)]
    tree = render_tree(files, 1000)
    assert len(tree) <= 1000
    assert tree.startswith("file_0000.txt\nfile_0001.txt")
    assert "files not listed by name" in tree


def test_tree_is_deterministic_whatever_the_input_order() -> None:
    files = [f"d{i % 7}/s{i % 3}/f{i}.py" for i in range(200)]
    assert render_tree(files, 2000) == render_tree(list(reversed(files)), 2000)


def test_tree_edge_budgets_and_empty_workspaces(tmp_path: Path) -> None:
    assert render_tree(["a.py"], 0) == ""
    assert len(render_tree([f"f{i}" for i in range(100)], 50)) <= 50
    (tmp_path / "empty").mkdir()
    assert build_directory_tree(tmp_path / "empty", 100) == "(no files)"


def test_tree_honours_file_globs(shared_git: Path) -> None:
    assert build_directory_tree(shared_git, 1000, file_globs=("docs/*.md", "*.py")) == (
        "docs/\n  guide.md\nsrc/\n  util/\n    strings.py\n  app.py\n  config.py"
    )


def test_listing_of_a_git_ignored_root_walks_it(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {".gitignore": "build/\n", "a.py": ""})
    write_tree(repo / "build", {"out.txt": "x"})
    assert list_workspace_files(repo / "build") == ["out.txt"]


def test_a_truncated_tree_spends_its_budget_where_the_files_are() -> None:
    files = [f"packages/big/src/m{i % 50}/f{i}.ts" for i in range(20_000)]
    files += [f"d{d:02d}/sub{j % 3}/x{j}.py" for d in range(30) for j in range(5 + d * 3)]
    files += [f"top{j}.md" for j in range(10)]
    tree = render_tree(sorted(files), 20_000)
    lines = tree.split("\n")
    assert len(tree) <= 20_000
    assert len(tree) > 0.8 * 20_000  # a cut at one depth used a fraction of it
    assert lines[0] == "packages/big/src/ (20000 files)"  # the largest directory first
    top_level = {line.split("/")[0] for line in lines if "/" in line and line[0] != " "}
    assert top_level == {"packages"} | {f"d{d:02d}" for d in range(30)}
    assert any(line.startswith("    ") and line.endswith(".ts") for line in lines)  # depth
    assert any("more entries" in line for line in lines)  # big directories summarised


def test_a_huge_flat_directory_is_summarised_with_its_largest_children() -> None:
    files = [f"flat/f{i:05d}.txt" for i in range(30_000)]
    files += [f"flat/sub{k}/g{i}.txt" for k in range(3) for i in range(10 * (k + 1))]
    tree = render_tree(files, 2_000)
    lines = tree.split("\n")
    assert len(tree) <= 2_000
    assert lines[:4] == [
        "flat/ (30060 files)",
        "  sub2/ (30 files)",
        "  sub1/ (20 files)",
        "  sub0/ (10 files)",
    ]
    assert any(line.startswith("  … ") and "more entries" in line for line in lines)


def _with_submodule(tmp_path: Path) -> Path:
    lib = make_repo(tmp_path / "lib", {"src/vendored.py": "def vendored(): ...\n"})
    (lib / ".gitignore").write_text("*.log\n", encoding="utf-8")
    git(lib, "add", ".gitignore")
    git(lib, "commit", "-qm", "ignore logs")
    nested = make_repo(tmp_path / "nested", {"deep.py": "D = 1\n"})
    git(lib, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(nested), "inner")
    git(lib, "commit", "-qm", "nested submodule")
    app = make_repo(tmp_path / "app", {"main.py": "import lib\n"})
    git(app, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "vendor/lib")
    git(
        app,
        "-c",
        "protocol.file.allow=always",
        "submodule",
        "update",
        "-q",
        "--init",
        "--recursive",
    )
    git(app, "commit", "-qm", "vendor lib")
    (app / "vendor" / "lib" / "x.log").write_text("ignored by lib's own rules\n", encoding="utf-8")
    return app


def test_a_submodules_files_are_part_of_the_listing_and_the_tree(tmp_path: Path) -> None:
    app = _with_submodule(tmp_path)
    assert list_workspace_files(app) == [
        ".gitmodules",
        "main.py",
        "vendor/lib/.gitignore",
        "vendor/lib/.gitmodules",
        "vendor/lib/inner/deep.py",
        "vendor/lib/src/vendored.py",
    ]
    tree = build_directory_tree(app, 10_000)
    assert "vendored.py" in tree and "deep.py" in tree
    # In its own root (LIVE_MEMORY_REPO_ROOT_MODE=nearest) the submodule lists itself.
    assert list_workspace_files(app / "vendor" / "lib") == [
        ".gitignore",
        ".gitmodules",
        "inner/deep.py",
        "src/vendored.py",
    ]


def test_an_uninitialised_submodule_is_not_listed_as_a_file(tmp_path: Path) -> None:
    app = _with_submodule(tmp_path)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(app), str(clone))  # submodules not checked out
    assert list_workspace_files(clone) == [".gitmodules", "main.py"]


def test_find_paths_looks_inside_a_submodule(tmp_path: Path) -> None:
    app = _with_submodule(tmp_path)
    toolbox = Toolbox(app)
    outcome = toolbox.run("find_paths", {"path": "vendor", "max_depth": 3})
    assert outcome.text.split("\n") == [
        "vendor/lib/ (4 files)",
        "vendor/lib/.gitignore",
        "vendor/lib/.gitmodules",
        "vendor/lib/inner/ (1 file)",
        "vendor/lib/inner/deep.py",
        "vendor/lib/src/ (1 file)",
        "vendor/lib/src/vendored.py",
    ]
    assert toolbox.run("find_paths", {"name": "deep.py", "max_depth": 4}).text == (
        "vendor/lib/inner/deep.py"
    )
