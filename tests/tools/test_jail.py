from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from live_memory.config.constants import DEFAULT_SECRET_PATH_PATTERNS, SECRET_REDACTION
from live_memory.errors import LiveMemoryError, PathOutsideWorkspace
from live_memory.tools import UnreadableFile, read_workspace_text, resolve_in_root
from live_memory.tools.jail import check_regular, open_files_in_root, open_in_root
from tests.tools.conftest import AWS_KEY, FIXTURE_FILES

MAX = 1024 * 1024


def test_relative_path_resolves_under_the_root(plain_root: Path) -> None:
    assert resolve_in_root(plain_root, "src/app.py") == plain_root.resolve() / "src/app.py"


def test_absolute_path_inside_the_root_is_accepted(plain_root: Path) -> None:
    absolute = str(plain_root / "src" / "app.py")
    assert resolve_in_root(plain_root, absolute) == plain_root.resolve() / "src/app.py"


def test_empty_path_and_dot_are_the_root(plain_root: Path) -> None:
    assert resolve_in_root(plain_root, "") == plain_root.resolve()
    assert resolve_in_root(plain_root, ".") == plain_root.resolve()


def test_dotdot_that_stays_inside_is_accepted(plain_root: Path) -> None:
    assert resolve_in_root(plain_root, "src/util/../app.py") == plain_root.resolve() / "src/app.py"


@pytest.mark.parametrize("path", ["..", "../outside/secret.txt", "src/../../x", "/etc/passwd", "/"])
def test_paths_leaving_the_root_are_refused(plain_root: Path, path: str) -> None:
    with pytest.raises(PathOutsideWorkspace, match="outside the workspace"):
        resolve_in_root(plain_root, path)


def test_sibling_directory_sharing_the_root_prefix_is_refused(tmp_path: Path) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app-secrets").mkdir()
    with pytest.raises(PathOutsideWorkspace):
        resolve_in_root(tmp_path / "app", str(tmp_path / "app-secrets"))


def test_nul_byte_is_refused(plain_root: Path) -> None:
    with pytest.raises(PathOutsideWorkspace, match="NUL"):
        resolve_in_root(plain_root, "src/app.py\x00.txt")


def test_unencodable_path_is_refused(plain_root: Path) -> None:
    with pytest.raises(PathOutsideWorkspace, match="encoded"):
        resolve_in_root(plain_root, "bad\ud800name")


def test_symlink_leaving_the_root_is_refused_after_resolution(plain_root: Path) -> None:
    with pytest.raises(PathOutsideWorkspace):
        resolve_in_root(plain_root, "link_out.txt")


def test_directory_symlink_leaving_the_root_is_refused(plain_root: Path, outside: Path) -> None:
    os.symlink(outside, plain_root / "escape")
    with pytest.raises(PathOutsideWorkspace):
        resolve_in_root(plain_root, "escape/secret.txt")


def test_root_given_through_a_symlink_still_jails(tmp_path: Path, plain_root: Path) -> None:
    alias = tmp_path / "alias"
    os.symlink(plain_root, alias)
    assert resolve_in_root(alias, "src/app.py") == plain_root.resolve() / "src/app.py"
    with pytest.raises(PathOutsideWorkspace):
        resolve_in_root(alias, "../outside/secret.txt")


def test_read_refuses_device_file_reached_through_a_symlink(plain_root: Path) -> None:
    os.symlink("/dev/null", plain_root / "null")
    with pytest.raises(PathOutsideWorkspace):
        read_workspace_text(plain_root, "null", max_bytes=MAX)


def test_read_refuses_a_fifo_without_blocking(plain_root: Path) -> None:
    with pytest.raises(UnreadableFile, match="FIFO") as caught:
        read_workspace_text(plain_root, "pipe.txt", max_bytes=MAX)
    assert caught.value.reason == "special"


def test_read_refuses_a_directory(plain_root: Path) -> None:
    with pytest.raises(UnreadableFile, match="directory"):
        read_workspace_text(plain_root, "src", max_bytes=MAX)


def test_read_refuses_a_binary_file(plain_root: Path) -> None:
    with pytest.raises(UnreadableFile, match="binary") as caught:
        read_workspace_text(plain_root, "assets/logo.bin", max_bytes=MAX)
    assert caught.value.reason == "binary"


def test_read_refuses_a_missing_file(plain_root: Path) -> None:
    with pytest.raises(UnreadableFile, match="does not exist") as caught:
        read_workspace_text(plain_root, "src/nope.py", max_bytes=MAX)
    assert caught.value.reason == "missing"


def test_read_refuses_a_file_over_the_size_limit(plain_root: Path) -> None:
    with pytest.raises(UnreadableFile, match="read limit") as caught:
        read_workspace_text(plain_root, "long/line.txt", max_bytes=100)
    assert caught.value.reason == "too_large"


@pytest.mark.parametrize("path", [".env", "deploy/server.pem", "env_link.txt"])
def test_read_refuses_secret_files_by_name_or_by_link_target(plain_root: Path, path: str) -> None:
    with pytest.raises(UnreadableFile, match="secret") as caught:
        read_workspace_text(plain_root, path, max_bytes=MAX)
    assert caught.value.reason == "secret"


def test_read_refuses_a_link_named_like_a_secret(plain_root: Path) -> None:
    os.symlink("README.md", plain_root / ".env.local")
    with pytest.raises(UnreadableFile, match="secret"):
        read_workspace_text(plain_root, ".env.local", max_bytes=MAX)


def test_read_redacts_secret_lines_and_hashes_the_real_bytes(plain_root: Path) -> None:
    text, read = read_workspace_text(plain_root, "src/config.py", max_bytes=MAX)
    assert AWS_KEY not in text
    assert SECRET_REDACTION in text
    raw = (plain_root / "src/config.py").read_bytes()
    assert read.path == "src/config.py"
    assert read.sha256 == hashlib.sha256(raw).hexdigest()
    assert read.size == len(raw)


def test_read_through_an_inside_link_reports_the_target_path(plain_root: Path) -> None:
    text, read = read_workspace_text(plain_root, "link_in.md", max_bytes=MAX)
    assert text.startswith("# Demo")
    assert read.path == "README.md"


def test_read_drops_a_utf8_bom_and_replaces_invalid_bytes(plain_root: Path) -> None:
    (plain_root / "latin.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    assert read_workspace_text(plain_root, "docs/bom.txt", max_bytes=MAX)[0] == "TODO with bom\n"
    assert read_workspace_text(plain_root, "latin.txt", max_bytes=MAX)[0] == "caf\ufffd\n"


def test_opening_many_files_at_once_keeps_exactly_what_open_in_root_would(
    plain_root: Path,
) -> None:
    """`open_files_in_root` (Grep opens the files it shows with it) decides each path as
    `open_in_root` plus `check_regular` do: links out of the root, to a secret, a secret
    name, git's files, a FIFO, a directory, a missing file are all left out."""
    os.mkdir(plain_root / ".git")
    (plain_root / ".git" / "config").write_text("[http]\n", encoding="utf-8")
    os.symlink("src", plain_root / "src_link")
    names = [
        *sorted(FIXTURE_FILES),
        *("link_out.txt", "link_in.md", "env_link.txt", "pipe.txt", "assets/logo.bin"),
        *(".git/config", "src", "src_link/app.py", "missing.txt", "src/../README.md"),
    ]
    expected = []
    for name in names:
        try:
            os.close(check_regular(open_in_root(plain_root, name).fd, name))
        except (LiveMemoryError, OSError):
            continue
        expected.append(name)
    opened = open_files_in_root(plain_root, names, secret_patterns=DEFAULT_SECRET_PATH_PATTERNS)
    try:
        assert list(opened) == expected
        assert {"link_in.md", "src_link/app.py", "src/../README.md", "src/app.py"} <= set(opened)
        refused = {"link_out.txt", "env_link.txt", "pipe.txt", ".git/config", ".env", "src"}
        assert not (refused | {"missing.txt", "deploy/server.pem"}) & set(opened)
        for name, fd in opened.items():
            assert os.read(fd, 1 << 20) == (plain_root / name).read_bytes()
    finally:
        for fd in opened.values():
            os.close(fd)
