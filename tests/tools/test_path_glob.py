from __future__ import annotations

import pytest

from live_memory.tools.path_glob import compile_glob


@pytest.mark.parametrize(
    ("glob", "path", "matches"),
    [
        ("*.py", "a.py", True),
        ("*.py", "deep/er/a.py", True),
        ("src/*.py", "src/a.py", True),
        ("src/*.py", "src/x/a.py", False),
        ("**/*.py", "a.py", True),
        ("**/*.py", "a/b/c.py", True),
        ("src/**/*.ts", "src/a.ts", True),
        ("src/**/*.ts", "src/x/y/a.ts", True),
        ("src/**", "src/a/b", True),
        ("*.{ts,tsx}", "a/b.tsx", True),
        ("*.{ts,{js,jsx}}", "b.jsx", True),
        ("[a-c]*.md", "b.md", True),
        ("[!a-c]*.md", "b.md", False),
        ("a?c", "a/c", False),
        ("a[/]c", "a/c", False),
        ("docs/", "docs/x/y.md", True),
        ("./src/*.py", "src/a.py", True),
        ("/src/*.py", "src/a.py", True),
        ("\\*.py", "*.py", True),
        ("\\*.py", "a.py", False),
        ("[--x]", "-", True),
        ("{a,b", "{a,b", True),
        ("[abc", "[abc", True),
    ],
)
def test_globs_match_like_gitignore_and_ripgrep(glob: str, path: str, matches: bool) -> None:
    assert (compile_glob(glob).fullmatch(path) is not None) is matches


@pytest.mark.parametrize("glob", ["", "  ", "../x", "a/../../b"])
def test_empty_or_climbing_globs_are_refused(glob: str) -> None:
    with pytest.raises(ValueError, match="glob"):
        compile_glob(glob)
