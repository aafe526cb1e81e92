"""File-change notifications applied to a window: scope, hygiene, staleness, echoes, hints."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from live_memory.config import constants as C
from live_memory.memory.ingest import Ingestor, held_bytes_cap, in_scope
from live_memory.memory.model import LedgerFact
from live_memory.memory.window import Window
from tests.support.repo import make_repo

API_KEY = "sk-proj-4f9a8B7c6D5e4F3a2B1c0D9e8F7a6B5c"


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(
        tmp_path_factory.mktemp("template") / "repo",
        {"src/app.py": "def main(): ...\n", "docs/guide.md": "# Guide\n", "README.md": "hi\n"},
    )


@pytest.fixture
def repo(template: Path, tmp_path: Path) -> Path:
    """A private copy of one committed repository (cheaper than running git per test)."""
    return Path(shutil.copytree(template, tmp_path / "repo", symlinks=True)).resolve()


def fresh(repo: Path, **kwargs: object) -> tuple[Ingestor, Window]:
    window = Window(str(repo))
    window.freeze()
    return Ingestor(repo, **kwargs), window  # type: ignore[arg-type]


# --- paths and scope -----------------------------------------------------------------------
def test_absolute_paths_inside_the_root_become_relative(repo: Path) -> None:
    ingestor = Ingestor(repo)
    assert ingestor.relative(f"{repo}/src/app.py") == "src/app.py"
    assert ingestor.relative(f"{repo}//src/./app.py") == "src/app.py"
    assert ingestor.relative("src/app.py") == "src/app.py"
    assert ingestor.relative("./src//app.py") == "src/app.py"


def test_paths_outside_the_root_or_unusable_are_refused(repo: Path) -> None:
    ingestor = Ingestor(repo)
    for path in (
        "/etc/passwd",
        f"{repo}-sibling/a.py",  # shares the root's prefix but is another directory
        str(repo),
        f"{repo}/",
        "src/../../escape.py",
        "../escape.py",
        "src/../app.py",
        "",
        "a\0b.py",
        ".git/config",
        f"{repo}/.git/HEAD",
        "sub/.git/config",  # a nested repository's or submodule's internals too
        f"{repo}/vendor/lib/.git/HEAD",
        ".",
    ):
        assert ingestor.relative(path) is None, path


def test_events_outside_the_root_change_nothing(repo: Path) -> None:
    ingestor, window = fresh(repo)
    assert ingestor.apply(window, "/etc/hosts", "read", "127.0.0.1 localhost\n") is False
    assert ingestor.apply(window, "../x.py", "write", "x") is False
    assert ingestor.apply(window, f"{repo}/.git/config", "read", "[core]\n") is False
    assert window.files == {}


def test_file_globs_scope_every_kind_of_event(repo: Path) -> None:
    ingestor, window = fresh(repo, file_globs=("docs/*.md",))
    assert ingestor.apply(window, f"{repo}/docs/guide.md", "read", "# Guide\n") is True
    # One glob dialect everywhere (live_memory.path_glob): `*` stays within a directory.
    assert ingestor.apply(window, "docs/deep/nested.md", "read", "nested\n") is False
    assert ingestor.apply(window, "src/app.py", "read", "def main(): ...\n") is False
    assert set(window.files) == {"docs/guide.md"}
    window.record_read("src/app.py", sha("def main(): ...\n"), 16)  # known, but out of scope
    assert ingestor.apply(window, "src/app.py", "change", None) is False
    assert ingestor.apply(window, "src/app.py", "unlink", None) is False
    assert window.files["src/app.py"].state == "current"


def test_in_scope_without_globs_takes_everything() -> None:
    assert in_scope("any/where.bin", ())
    assert in_scope("docs/a/b.md", ("*.md",))
    assert not in_scope("docs/a/b.mdx", ("*.md",))
    assert in_scope("docs/a/b.md", ("docs/**",))
    assert not in_scope("docs/a/b.md", ("docs/*.md",))


# --- content events ------------------------------------------------------------------------
def test_a_teed_read_is_observed_with_the_hash_of_its_bytes(repo: Path) -> None:
    ingestor, window = fresh(repo)
    text = "def main(): ...\n"
    assert ingestor.apply(window, f"{repo}/src/app.py", "read", text) is True
    ctx = window.files["src/app.py"]
    assert (ctx.content, ctx.sha256, ctx.size, ctx.source) == (text, sha(text), 16, "observed")
    assert window.pending == {"src/app.py": "content"}


def test_a_teed_write_is_observed_even_for_a_never_read_file(repo: Path) -> None:
    ingestor, window = fresh(repo)
    assert ingestor.apply(window, "src/new.py", "write", "NEW = 1\n") is True
    assert window.files["src/new.py"].content == "NEW = 1\n"


def test_passive_ingestion_off_keeps_hints_only(repo: Path) -> None:
    ingestor, window = fresh(repo, passive_ingestion=False)
    assert ingestor.apply(window, "src/app.py", "read", "def main(): ...\n") is False
    assert ingestor.apply(window, "src/new.py", "write", "x = 1\n") is False
    assert window.files == {}
    window.record_read("src/app.py", sha("def main(): ...\n"), 16)
    assert ingestor.apply(window, "src/app.py", "write", "def main(): return 1\n") is True
    ctx = window.files["src/app.py"]
    assert ctx.content is None
    assert window.drain_recently_modified() == ["src/app.py"]


@pytest.mark.parametrize("path", [".env", "config/.env.production", "keys/server.pem", "id_rsa"])
def test_secret_files_content_is_never_observed(repo: Path, path: str) -> None:
    ingestor, window = fresh(repo)
    secret = f"TOKEN={API_KEY}\n"
    assert ingestor.apply(window, path, "read", secret) is False
    assert ingestor.apply(window, path, "write", secret) is False
    assert path not in window.files
    window.record_read(path, sha("old"), 3)  # even a file the model knows keeps no content
    ingestor.apply(window, path, "write", secret)
    assert window.files[path].content is None
    window.sync_deltas()
    assert all(API_KEY not in t.text for t in window.history)
    window.freeze()
    assert window.frozen is not None and API_KEY not in window.frozen


def test_secret_looking_lines_are_redacted_but_the_hash_is_of_the_real_bytes(repo: Path) -> None:
    ingestor, window = fresh(repo)
    text = f'NAME = "demo"\nOPENAI_API_KEY = "{API_KEY}"\nprint(NAME)\n'
    assert ingestor.apply(window, "settings.py", "read", text) is True
    ctx = window.files["settings.py"]
    assert ctx.content is not None
    assert API_KEY not in ctx.content
    assert C.SECRET_REDACTION in ctx.content
    assert ctx.content.count("\n") == text.count("\n")
    assert 'NAME = "demo"' in ctx.content
    assert ctx.sha256 == sha(text)


def test_the_same_bytes_teed_again_keep_their_redaction_and_count_as_used(repo: Path) -> None:
    ingestor, window = fresh(repo, max_held_bytes=2 * 1024)
    text = f'OPENAI_API_KEY = "{API_KEY}"\n' + "x = 1\n" * 120
    assert ingestor.apply(window, "a.py", "read", text)
    assert ingestor.apply(window, "b.py", "read", "y = 2\n" * 120)
    held = window.files["a.py"].content
    assert ingestor.apply(window, "a.py", "read", text)  # held already: not redacted again
    assert window.files["a.py"].content == held and API_KEY not in (held or "")
    assert ingestor.apply(window, "c.py", "read", "z = 3\n" * 120)  # sheds the least used
    assert [p for p, f in window.files.items() if f.content is not None] == ["a.py", "c.py"]


def test_oversize_content_is_not_held(repo: Path) -> None:
    ingestor, window = fresh(repo, max_file_bytes=100)
    assert ingestor.apply(window, "big.txt", "read", "x" * 101) is False
    assert ingestor.apply(window, "fits.txt", "read", "x" * 100) is True
    assert "big.txt" not in window.files
    multibyte = "é" * 51  # 102 bytes in UTF-8, 51 characters
    assert ingestor.apply(window, "accents.txt", "read", multibyte) is False


def test_binary_content_is_not_held(repo: Path) -> None:
    ingestor, window = fresh(repo)
    assert ingestor.apply(window, "image.png", "read", "\x89PNG\r\n\x1a\n\x00\x00\x00IHDR") is False
    assert ingestor.apply(window, "image.png", "write", "\x00" * 64) is False
    assert window.files == {}


# --- change, add, unlink -------------------------------------------------------------------
def test_change_and_add_make_only_known_files_stale(repo: Path) -> None:
    ingestor, window = fresh(repo)
    ingestor.apply(window, "src/app.py", "read", "def main(): ...\n")
    (repo / "src/app.py").write_text("def main(): return 1\n", encoding="utf-8")
    assert ingestor.apply(window, f"{repo}/src/app.py", "change", None) is True
    assert window.files["src/app.py"].state == "stale"
    assert window.files["src/app.py"].content is None
    assert ingestor.apply(window, "README.md", "change", None) is False
    assert ingestor.apply(window, "brand-new.py", "add", None) is False
    assert set(window.files) == {"src/app.py"}
    window.record_read("README.md", sha("hi\n"), 3)
    (repo / "README.md").write_text("hello\n", encoding="utf-8")
    assert ingestor.apply(window, "README.md", "add", None) is True
    assert window.files["README.md"].state == "stale"


def test_unlink_marks_a_known_file_deleted(repo: Path) -> None:
    ingestor, window = fresh(repo)
    window.record_read("src/app.py", sha("def main(): ...\n"), 16)
    assert ingestor.apply(window, "src/app.py", "unlink", None) is True
    assert window.files["src/app.py"].state == "deleted"
    assert ingestor.apply(window, "never.py", "unlink", None) is False
    window.sync_deltas()
    assert "- src/app.py — DELETED" in window.history[-1].text


def test_a_fact_citing_a_file_no_longer_held_is_demoted_when_the_file_moves_on(
    repo: Path,
) -> None:
    """A compaction can evict a file while a fact still cites it: its change or removal
    must still demote the fact (the window no longer holds the file to mark stale)."""
    ingestor, window = fresh(repo)
    cited = (("src/app.py", sha("def main(): ...\n")),)
    window.ledger = [LedgerFact("main lives in src/app.py", cited)]
    assert "src/app.py" not in window.files
    assert ingestor.apply(window, "src/app.py", "change", None) is False  # same bytes on disk
    assert not window.ledger[0].stale
    assert ingestor.apply(window, "README.md", "change", None) is False  # cited by nothing
    (repo / "src/app.py").write_text("def main(): return 1\n", encoding="utf-8")
    assert ingestor.apply(window, "src/app.py", "change", None) is True
    assert window.ledger[0].stale and window.ledger_demotions == 1
    assert "src/app.py" not in window.files  # nothing re-enters the manifest
    window.ledger = [LedgerFact("main lives in src/app.py", cited)]
    assert ingestor.apply(window, "src/app.py", "unlink", None) is True
    assert window.ledger[0].stale


def test_unknown_kinds_are_ignored(repo: Path) -> None:
    ingestor, window = fresh(repo)
    window.record_read("src/app.py", sha("x"), 1)
    assert ingestor.apply(window, "src/app.py", "rename", None) is False
    assert window.files["src/app.py"].state == "current"


# --- changes whose bytes the window already holds -------------------------------------------
def test_echo_of_our_own_teed_write_is_no_change(repo: Path) -> None:
    ingestor, window = fresh(repo)
    text = "def main(): return 2\n"
    (repo / "src/app.py").write_text(text, encoding="utf-8")
    assert ingestor.apply(window, "src/app.py", "write", text) is True
    assert ingestor.apply(window, f"{repo}/src/app.py", "change", None) is False
    ctx = window.files["src/app.py"]
    assert (ctx.state, ctx.content) == ("current", text)


def test_a_commit_or_touch_that_leaves_the_bytes_alone_is_no_change(repo: Path) -> None:
    ingestor, window = fresh(repo)
    ingestor.apply(window, "src/app.py", "read", "def main(): ...\n")
    assert ingestor.apply(window, "src/app.py", "change", None) is False
    assert window.files["src/app.py"].state == "current"


def test_a_real_change_after_our_write_is_stale(repo: Path) -> None:
    ingestor, window = fresh(repo)
    text = "def main(): return 2\n"
    (repo / "src/app.py").write_text(text, encoding="utf-8")
    ingestor.apply(window, "src/app.py", "write", text)
    (repo / "src/app.py").write_text("def main(): return 3\n", encoding="utf-8")
    assert ingestor.apply(window, "src/app.py", "change", None) is True
    assert window.files["src/app.py"].state == "stale"


def test_a_deleted_file_that_comes_back_is_stale_not_deleted(repo: Path) -> None:
    ingestor, window = fresh(repo)
    text = "def main(): return 2\n"
    (repo / "src/app.py").write_text(text, encoding="utf-8")
    ingestor.apply(window, "src/app.py", "write", text)
    assert ingestor.apply(window, "src/app.py", "unlink", None) is True
    assert ingestor.apply(window, "src/app.py", "add", None) is True
    assert window.files["src/app.py"].state == "stale"


# --- edits without content -----------------------------------------------------------------
def test_a_write_without_content_becomes_a_recently_modified_hint(repo: Path) -> None:
    ingestor, window = fresh(repo)
    window.record_read("src/app.py", sha("def main(): ...\n"), 16)
    assert ingestor.apply(window, "src/app.py", "write", None) is True
    assert window.drain_recently_modified() == ["src/app.py"]
    assert ingestor.apply(window, "unknown.py", "write", None) is False
    assert window.drain_recently_modified() == []


def test_an_edit_without_content_hints_known_files_only(repo: Path) -> None:
    ingestor, window = fresh(repo)
    window.record_read("src/app.py", sha("def main(): ...\n"), 16)
    assert ingestor.apply(window, "src/app.py", "modified", None) is True
    assert ingestor.apply(window, "src/app.py", "modified", None) is True  # still known
    assert ingestor.apply(window, "unknown.py", "modified", None) is False
    assert window.drain_recently_modified() == ["src/app.py"]


def test_an_edit_without_content_never_leaves_old_held_bytes_looking_current(repo: Path) -> None:
    ingestor, window = fresh(repo)
    ingestor.apply(window, "src/app.py", "write", "line one\nline two\n")
    window.freeze()
    assert ingestor.apply(window, "src/app.py", "modified", None) is True
    ctx = window.files["src/app.py"]
    assert ctx.content is None
    assert ctx.state == "stale"
    window.sync_deltas()
    assert "- src/app.py — CHANGED" in window.history[-1].text
    assert window.drain_recently_modified() == ["src/app.py"]


# --- the held-bytes cap ----------------------------------------------------------------------
def test_teed_reads_past_the_held_cap_shed_the_least_recently_used_content(repo: Path) -> None:
    ingestor, window = fresh(repo, max_held_bytes=3000)
    for i in range(2000):
        assert ingestor.apply(window, f"src/r{i}.py", "read", f"# file {i}\n" + "x" * 960)
    assert window.held_bytes <= 3000
    held = [p for p, f in window.files.items() if f.content is not None]
    assert held == ["src/r1997.py", "src/r1998.py", "src/r1999.py"]  # the newest stay
    assert window.counts()["loaded"] == 2000  # the rest stay known, re-readable from disk
    assert window.files["src/r0.py"].source == "read"


def test_shedding_a_file_new_since_the_last_delta_sends_no_notice(repo: Path) -> None:
    ingestor, window = fresh(repo, max_held_bytes=1500)
    ingestor.apply(window, "src/old.py", "read", "o" * 1000)
    window.sync_deltas()  # the model now holds src/old.py's bytes
    ingestor.apply(window, "src/old.py", "write", "p" * 1000)  # a new version, pending
    for i in range(3):
        ingestor.apply(window, f"src/n{i}.py", "read", "n" * 1000)
    # the new version of old.py was never sent: the model is told its copy is outdated;
    # n0 and n1 were never sent either, and are simply dropped from the coming delta
    assert window.pending == {"src/old.py": "stale", "src/n2.py": "content"}
    assert window.held_bytes == 1000


def test_the_held_cap_follows_the_setting_and_half_the_compaction_floor() -> None:
    assert held_bytes_cap(C.MAX_HELD_BYTES, 200_000, 0.6) == int(200_000 * 0.6 * 4 * 0.5)
    assert held_bytes_cap(C.MAX_HELD_BYTES, 1_000_000, 0.6) == C.MAX_HELD_BYTES
    assert held_bytes_cap(0, 200_000, 0.6) == 0


def test_a_window_remembers_at_most_the_manifest_cap_of_files(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(C, "MANIFEST_MAX_FILES", 50)
    ingestor, window = fresh(repo, max_held_bytes=100)
    for i in range(200):
        ingestor.apply(window, f"src/m{i}.py", "read", f"m{i}")
    assert len(window.files) == 50
    assert "src/m199.py" in window.files and "src/m0.py" not in window.files
