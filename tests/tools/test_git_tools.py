from __future__ import annotations

from pathlib import Path

import pytest

from live_memory.config.constants import SECRET_REDACTION
from live_memory.tools import Toolbox
from live_memory.watchers.git_process import run_git as watcher_git
from tests.support.repo import git, make_repo
from tests.tools.conftest import AWS_KEY


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository with a few meaningful commits, and uncommitted work on top."""
    root = make_repo(
        tmp_path_factory.mktemp("history") / "repo",
        {
            "app/retry.py": "def retry():\n    return 1\n",
            "app/cache.py": "CACHE = {}\n",
            "README.md": "demo\n",
        },
    )
    (root / "app" / "retry.py").write_text(
        "def retry(times=3):\n    return times\n", encoding="utf-8"
    )
    git(
        root,
        "commit",
        "-q",
        "-am",
        "Add exponential backoff to retry\n\nBecause the API rate-limits bursts.",
    )
    (root / ".env").write_text("TOKEN=hunter2hunter2\n", encoding="utf-8")
    (root / "app" / "settings.py").write_text(f"KEY = '{AWS_KEY}'\n", encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "Configure credentials")
    git(root, "mv", "app/cache.py", "app/store.py")
    git(root, "commit", "-q", "-m", "Rename cache module to store")
    # Uncommitted: one staged edit, one unstaged edit, one untracked file, one deletion.
    (root / "app" / "store.py").write_text("STORE = {}\n", encoding="utf-8")
    git(root, "add", "app/store.py")
    (root / "app" / "retry.py").write_text(
        "def retry(times=5):\n    return times\n", encoding="utf-8"
    )
    (root / "notes.txt").write_text("scratch\n", encoding="utf-8")
    (root / "README.md").unlink()
    return root


def test_get_changed_files_describes_each_change_in_words(history: Path) -> None:
    outcome = Toolbox(history).run("get_changed_files", {})
    assert not outcome.is_error
    assert outcome.text.split("\n") == [
        "4 changed paths (branch: main) (git status):",
        "README.md  [not staged: deleted]",
        "app/retry.py  [not staged: modified]",
        "app/store.py  [staged: modified]",
        "notes.txt  [untracked]",
    ]


def test_get_changed_files_reports_renames_with_their_origin(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"old.py": "x = 1\n"})
    git(root, "mv", "old.py", "new.py")
    text = Toolbox(root).run("get_changed_files", {}).text
    assert "new.py (from old.py)  [staged: renamed]" in text


def test_get_changed_files_on_a_clean_tree_says_so(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"a.py": "a = 1\n"})
    assert Toolbox(root).run("get_changed_files", {}).text == (
        "No uncommitted changes (branch: main): the working tree matches HEAD."
    )


def test_get_changed_files_in_a_subdirectory_root_is_relative_to_it(history: Path) -> None:
    text = Toolbox(history / "app").run("get_changed_files", {}).text
    assert "retry.py  [not staged: modified]" in text
    assert "README.md" not in text and "notes.txt" not in text


def test_git_tools_outside_git_explain_instead_of_failing(shared_plain: Path) -> None:
    toolbox = Toolbox(shared_plain)
    for name in ("get_changed_files", "git_search"):
        outcome = toolbox.run(name, {})
        assert outcome.is_error
        assert "not inside a git repository" in outcome.text


def test_git_search_finds_commits_by_all_message_words_case_insensitively(history: Path) -> None:
    outcome = Toolbox(history).run("git_search", {"query": "BACKOFF retry"})
    assert not outcome.is_error
    assert "Add exponential backoff to retry" in outcome.text
    assert "Because the API rate-limits bursts." in outcome.text
    assert "M\tapp/retry.py" in outcome.text  # files changed, without the diff
    assert "Rename cache" not in outcome.text and "@@" not in outcome.text


def test_git_search_by_path_follows_renames(history: Path) -> None:
    text = Toolbox(history).run("git_search", {"path": "app/store.py"}).text
    assert "Rename cache module to store" in text
    assert "initial" in text  # the file's life before the rename


def test_git_search_with_patch_shows_diffs_but_never_secrets(history: Path) -> None:
    text = Toolbox(history).run("git_search", {"query": "credentials", "patch": True}).text
    assert "diff --git a/app/settings.py b/app/settings.py" in text
    assert AWS_KEY not in text
    assert SECRET_REDACTION in text
    assert "diff --git a/.env b/.env\n[diff of a secret file withheld]" in text
    assert "hunter2" not in text


def test_git_search_limit_and_no_match(history: Path) -> None:
    toolbox = Toolbox(history)
    limited = toolbox.run("git_search", {"limit": 1}).text
    assert limited.count("commit ") == 1
    assert "[showing the latest 1 commits" in limited
    assert toolbox.run("git_search", {"query": "no-such-words"}).text == (
        "No commits found with messages containing 'no-such-words'."
    )


def test_git_search_in_a_repository_without_commits(tmp_path: Path) -> None:
    root = tmp_path / "empty"
    root.mkdir()
    git(root, "init", "-q")
    outcome = Toolbox(root).run("git_search", {})
    assert outcome.text == "git_search: this repository has no commits yet."


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        ({"path": "../x"}, "outside the workspace"),
        ({"path": "missing.py"}, "does not exist"),
        ({"limit": "lots"}, "must be an integer"),
        ({"patch": "sometimes"}, "true or false"),
        ({"query": {"a": 1}}, "must be a string"),
    ],
)
def test_git_search_bad_arguments_are_error_results(
    history: Path, arguments: dict[str, object], words: str
) -> None:
    outcome = Toolbox(history).run("git_search", arguments)
    assert outcome.is_error
    assert words in outcome.text


@pytest.fixture
def private(tmp_path: Path) -> Path:
    """Another repository on the machine, whose history no workspace may show."""
    return make_repo(tmp_path / "private", {"secret.txt": "PRIVATE-BYTES\n"})


def _commit(root: Path, rel: str, message: str) -> None:
    (root / rel).write_text(message, encoding="utf-8")
    git(root, "commit", "-q", "-am", message)


def _foreign_workspaces(tmp_path: Path, private: Path) -> list[Path]:
    """Workspaces whose `.git` leads to `private`'s history without belonging to it."""
    named = tmp_path / "named"  # a `.git` file naming the other repository's directory
    named.mkdir()
    (named / ".git").write_text(f"gitdir: {private / '.git'}\n", encoding="utf-8")
    linked = tmp_path / "linked"  # a `.git` symlink to it
    linked.mkdir()
    (linked / ".git").symlink_to(private / ".git")
    git(private, "worktree", "add", "-q", str(tmp_path / "real-worktree"))
    copied = tmp_path / "copied"  # a real worktree's `.git` file, copied elsewhere
    copied.mkdir()
    (copied / ".git").write_bytes((tmp_path / "real-worktree" / ".git").read_bytes())
    common = make_repo(tmp_path / "common", {"x.txt": "x\n"})  # refs and objects elsewhere
    (common / ".git" / "commondir").write_text(str(private / ".git"), encoding="utf-8")
    for workspace in (named, linked, copied, common):
        (workspace / "a.txt").write_text("mine\n", encoding="utf-8")
    return [named, linked, copied, common]


def test_a_git_directory_of_another_repository_is_refused_by_the_git_tools(
    tmp_path: Path, private: Path
) -> None:
    _commit(private, "secret.txt", "PRIVATE-HISTORY")
    assert "PRIVATE-HISTORY" in Toolbox(private).run("git_search", {}).text
    for workspace in _foreign_workspaces(tmp_path, private):
        toolbox = Toolbox(workspace)
        for tool, arguments in [
            ("git_search", {"patch": True}),
            ("git_search", {"query": "PRIVATE"}),
            ("get_changed_files", {}),
        ]:
            outcome = toolbox.run(tool, arguments)
            assert outcome.is_error, (workspace.name, outcome.text)
            assert "refused" in outcome.text, outcome.text
            assert "does not link back" in outcome.text or "another repository" in outcome.text
            assert "PRIVATE" not in outcome.text
        assert "a.txt" in toolbox.run("Glob", {"pattern": "*.txt"}).text  # listed without git
        assert watcher_git(workspace, ["log", "--format=%s"]) is None


def test_linked_worktrees_and_submodules_keep_their_git_tools(tmp_path: Path) -> None:
    main = make_repo(tmp_path / "main", {"app.py": "x = 1\n"})
    _commit(main, "app.py", "Tune the main app")
    worktree = tmp_path / "elsewhere" / "wt"
    git(main, "worktree", "add", "-q", "-b", "feature", str(worktree))
    (worktree / "app.py").write_text("x = 2\n", encoding="utf-8")
    library = make_repo(tmp_path / "library", {"lib.py": "y = 1\n"})
    _commit(library, "lib.py", "Tune the library")
    superproject = make_repo(tmp_path / "super", {"top.py": "z = 1\n"})
    git(superproject, "-c", "protocol.file.allow=always", "submodule", "add", "-q",
        f"file://{library}", "sub")  # fmt: skip
    git(superproject, "commit", "-q", "-m", "Add the library")
    (superproject / "sub" / "lib.py").write_text("y = 2\n", encoding="utf-8")
    (superproject / "top.py").write_text("z = 2\n", encoding="utf-8")
    for workspace, commit, changed in [
        (worktree, "Tune the main app", "app.py"),
        (superproject / "sub", "Tune the library", "lib.py"),
        (superproject, "Add the library", "top.py"),
    ]:
        toolbox = Toolbox(workspace)
        found = toolbox.run("git_search", {"patch": True})
        assert not found.is_error and commit in found.text, found.text
        status = toolbox.run("get_changed_files", {})
        assert not status.is_error and changed in status.text, status.text
        assert watcher_git(workspace, ["rev-parse", "HEAD"]) is not None
    assert "sub/lib.py" in Toolbox(superproject).run("Glob", {"pattern": "**/*.py"}).text
