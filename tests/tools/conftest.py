"""Workspaces on disk for the tool tests: plain directories and real git repositories."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import pytest

from live_memory.tools import Toolbox
from tests.support.repo import make_repo

AWS_KEY = "AKIA" + "ABCDEFGHIJKLMNOP"  # split so this file is not itself a secret

# A small tree that exercises every rule the tools share: ignores, secrets, binaries,
# encodings, links in and out of the root, empty files and a FIFO.
FIXTURE_FILES: Mapping[str, str] = {
    ".gitignore": "build/\n*.log\n!keep.log\n",
    "README.md": "# Demo\nTODO: write docs\n",
    "src/app.py": (
        "import os\n\n"
        "def handler(event):\n"
        "    # TODO: validate event\n"
        "    return process(event)\n\n"
        "def process(value):\n"
        "    return value  # todo later\n"
    ),
    "src/util/strings.py": "def shout(text):\n    return text.upper() + '!'\n\nCONSTANT = 'Todo'\n",
    "src/util/.gitignore": "generated_*.py\n",
    "src/util/generated_parser.py": "TODO = 'generated, ignored'\n",
    "src/config.py": f'API_KEY = "{AWS_KEY}"\nDEBUG = True  # TODO: turn off\n',
    "docs/guide.md": "Guide\n\nSee TODO list.\ncafé TODO ünïcode\n",
    "docs/windows.txt": "line one TODO\r\nline two\r\n",
    "docs/bom.txt": "\ufeffTODO with bom\n",
    "notes/empty.txt": "",
    "keep.log": "TODO in kept log\n",
    "debug.log": "TODO in ignored log\n",
    "build/out.txt": "TODO in build\n",
    ".env": "SECRET=TODO-hunter2\n",
    "deploy/server.pem": "TODO pem\n",
    "long/line.txt": "x" * 5000 + " TODO\n",
}


def write_tree(root: Path, files: Mapping[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    return root


def add_specials(root: Path, outside: Path) -> None:
    """Binary file, links in and out, a FIFO: things no tool may trip over."""
    (root / "assets").mkdir(exist_ok=True)
    (root / "assets" / "logo.bin").write_bytes(b"TODO\x00\x01\x02binary")
    outside.mkdir(parents=True, exist_ok=True)
    (outside / "secret.txt").write_text("TODO outside the root\n", encoding="utf-8")
    os.symlink(outside / "secret.txt", root / "link_out.txt")
    os.symlink("README.md", root / "link_in.md")
    os.symlink(".env", root / "env_link.txt")
    os.mkfifo(root / "pipe.txt")


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    return tmp_path / "outside"


@pytest.fixture
def plain_root(tmp_path: Path, outside: Path) -> Path:
    """A non-git workspace with the fixture tree."""
    root = write_tree(tmp_path / "plain", FIXTURE_FILES)
    add_specials(root, outside)
    return root


@pytest.fixture
def git_root(tmp_path: Path, outside: Path) -> Path:
    """A git repository with the fixture tree committed (ignored files stay untracked)."""
    root = tmp_path / "repo"
    make_repo(root, FIXTURE_FILES)
    add_specials(root, outside)
    return root


@pytest.fixture(scope="session")
def shared_roots(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Both fixture workspaces, built once; tests using them must not modify them."""
    base = tmp_path_factory.mktemp("shared")
    plain = write_tree(base / "plain", FIXTURE_FILES)
    add_specials(plain, base / "outside-plain")
    repo = make_repo(base / "repo", FIXTURE_FILES)
    add_specials(repo, base / "outside-repo")
    return {"plain": plain, "git": repo}


@pytest.fixture
def shared_git(shared_roots: dict[str, Path]) -> Path:
    return shared_roots["git"]


@pytest.fixture
def shared_plain(shared_roots: dict[str, Path]) -> Path:
    return shared_roots["plain"]


@pytest.fixture
def toolbox(shared_git: Path) -> Toolbox:
    return Toolbox(shared_git)
