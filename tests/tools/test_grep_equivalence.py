"""ripgrep and the pure-Python fallback must give the same answer for the same input."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from live_memory.tools import Toolbox
from tests.support.repo import make_repo
from tests.tools.conftest import FIXTURE_FILES, add_specials, write_tree

WORDS = [
    "alpha",
    "Beta",
    "gamma",
    "TODO",
    "fix",
    "value",
    "state",
    "None",
    "self",
    "return",
    "def",
    "class",
    "import",
    "café",
    "naïve",
    "x_00042(self",
    "ÉCOLE",
    "\t",
    "  ",
]

PATTERNS = [
    "todo",
    "^def ",
    r"return\s+\w+",
    "caf[eé]|ünïcode",
    "(?<=# )TODO",
    "t.do$",
    r"\bCONSTANT\b",
    "x{3}",
    "^TODO",
    r"x_\d{5}\(self",
    "naïve|école",
    "[A-Z]{4,}",
    "value  # todo",
    "a|",
]


def _generated_files(seed: int, count: int) -> dict[str, str]:
    rng = random.Random(seed)
    files: dict[str, str] = {}
    for index in range(count):
        lines = [
            " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 9)))
            for _ in range(rng.randint(0, 30))
        ]
        ending = "\r\n" if index % 7 == 0 else "\n"
        text = ending.join(lines) + (ending if index % 5 else "")
        files[f"pkg{index % 6}/sub{index % 4}/mod_{index}.py"] = text
    files["pkg0/.gitignore"] = "sub1/\n*_3.py\n"
    return files


@pytest.fixture(scope="module")
def roots(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("equivalence")
    files = {**FIXTURE_FILES, **_generated_files(seed=7, count=60)}
    plain = write_tree(base / "plain", files)
    add_specials(plain, base / "outside-plain")
    repo = make_repo(base / "repo", files)
    add_specials(repo, base / "outside-repo")
    return {"plain": plain, "git": repo}


def _both(root: Path, arguments: dict[str, object]) -> tuple[str, str]:
    fast = Toolbox(root)
    slow = Toolbox(root, use_ripgrep=False)
    assert (fast.grep_engine, slow.grep_engine) == ("ripgrep", "python")
    first = fast.run("Grep", arguments)
    second = slow.run("Grep", arguments)
    assert first.is_error == second.is_error
    return first.text, second.text


@pytest.mark.parametrize("mode", ["files_with_matches", "content", "count"])
@pytest.mark.parametrize("pattern", PATTERNS)
def test_ripgrep_and_python_fallback_agree_in_a_git_repo(
    roots: dict[str, Path], mode: str, pattern: str
) -> None:
    # Alternate case sensitivity across the matrix rather than doubling it.
    ignore_case = (PATTERNS.index(pattern) + len(mode)) % 2 == 0
    arguments: dict[str, object] = {"pattern": pattern, "output_mode": mode, "-i": ignore_case}
    fast, slow = _both(roots["git"], arguments)
    assert fast == slow, arguments


@pytest.mark.parametrize("pattern", PATTERNS)
def test_ripgrep_and_python_fallback_agree_outside_git(
    roots: dict[str, Path], pattern: str
) -> None:
    # Only the listing differs outside git; content mode exercises everything after it.
    arguments: dict[str, object] = {"pattern": pattern, "output_mode": "content"}
    fast, slow = _both(roots["plain"], arguments)
    assert fast == slow, arguments


@pytest.mark.parametrize(
    "arguments",
    [
        {"pattern": "todo", "path": "src"},
        {"pattern": "todo", "path": "docs/guide.md", "output_mode": "content"},
        # (not `*.py`: rg lets a glob naming files match an ignored one, the listing has none)
        {"pattern": "todo", "glob": "pkg*/**/*.py", "output_mode": "count"},
        {"pattern": "todo", "glob": "!pkg*/**", "output_mode": "content"},
        {"pattern": "self", "glob": "pkg1/**/*.py", "output_mode": "content", "head_limit": 7},
        {"pattern": "gamma", "head_limit": 5},
        {"pattern": "gamma", "head_limit": 0, "output_mode": "count"},
        {"pattern": "return", "path": "pkg2", "output_mode": "content", "head_limit": 3},
        {"pattern": "zzz-no-match"},
        {"pattern": "link", "path": "link_in.md"},
        {"pattern": "TODO", "path": "assets/logo.bin"},
        {"pattern": "TODO", "path": "debug.log", "output_mode": "content"},
    ],
)
def test_ripgrep_and_python_fallback_agree_on_paths_globs_and_limits(
    roots: dict[str, Path], arguments: dict[str, object]
) -> None:
    fast, slow = _both(roots["git"], arguments)
    assert fast == slow, arguments
