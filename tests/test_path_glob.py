from __future__ import annotations

import functools
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from live_memory.path_glob import GLOB_MAX_ALTERNATIVES, compile_glob, glob_set


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
        ("src/**", "src", False),
        ("a/**/b/**/c", "a/b/c", True),
        ("a/**/b/**/c", "a/x/b/y/z/c", True),
        ("a/**/b/**/c", "a/x/b/y/z/d", False),
        ("src/**.py", "src/a.py", True),  # `**` inside a segment is a plain star
        ("src/**.py", "src/x/a.py", False),
        ("*a*b*c", "xaxbxc", True),
        ("*a*b*c", "xaxbxcx", False),
        ("*.{ts,tsx}", "a/b.tsx", True),
        ("*.{ts,{js,jsx}}", "b.jsx", True),
        ("{src,lib}/**/*.rs", "lib/a/b.rs", True),
        ("{src/a,lib}/*.rs", "src/a/b.rs", True),
        ("[a-c]*.md", "b.md", True),
        ("[!a-c]*.md", "b.md", False),
        ("a?c", "a/c", False),
        ("a[/]c", "a/c", False),
        ("docs/", "docs/x/y.md", True),
        ("docs/", "sub/docs/y.md", True),
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
    assert compile_glob(glob).matches(path) is matches


@pytest.mark.parametrize("glob", ["", "  ", "../x", "a/../../b", "{..,a}/x", "x" * 1001])
def test_empty_climbing_or_oversized_globs_are_refused(glob: str) -> None:
    with pytest.raises(ValueError, match="glob"):
        compile_glob(glob)


def test_brace_expansion_is_bounded() -> None:
    compile_glob("{a,b}" * 7)  # 128 alternatives: allowed
    with pytest.raises(ValueError, match=f"more than {GLOB_MAX_ALTERNATIVES} alternatives"):
        compile_glob("{a,b}" * 8)


def test_case_insensitive_for_find_style_names() -> None:
    assert compile_glob("readme*", ignore_case=True).matches("README.md")
    assert not compile_glob("readme*").matches("README.md")


def test_a_glob_set_matches_any_and_skips_invalid_patterns() -> None:
    globs = glob_set(("docs/*.md", "../x", "*.py"))
    assert globs.matches("docs/a.md")
    assert globs.matches("a/b/c.py")
    assert not globs.matches("docs/a/b.md")
    assert not glob_set(()).matches("a")


# Adversarial shapes that make a backtracking translation exponential or high-degree
# polynomial (each row: pattern builder, path builder). `**/` * 12 + 'nomatch' against a
# 26-deep path took more than 20 s with the old translation, x4 per extra `**/`.
_ADVERSARIAL = [
    (lambda n: "**/" * n + "nomatch", lambda n: "/".join(["d"] * (n + 14)) + "/x.py"),
    (lambda n: "**/a*" * n + "/nomatch", lambda n: "/".join(["aaaa"] * (2 * n))),
    (lambda n: "*a" * n + "b", lambda n: "a" * (10 * n)),
    (lambda n: "/".join(["**/*a*a*"] * n) + "/x", lambda n: "/".join(["a" * 40] * (2 * n))),
    (lambda n: "{a,aa}" * min(n, 7) + "*" * n + "b", lambda n: "a" * (10 * n)),
]


@pytest.mark.parametrize(("make_glob", "make_path"), _ADVERSARIAL)
def test_adversarial_globs_match_in_bounded_time(make_glob, make_path) -> None:  # type: ignore[no-untyped-def]
    # n = 60 would take centuries if exponential; linear matching is microseconds. The bound
    # is generous for a loaded machine, and holds for every size on the curve.
    for n in (5, 15, 30, 60):
        glob = compile_glob(make_glob(n))
        path = make_path(n)
        started = time.process_time()
        for _ in range(10):
            glob.matches(path)
        assert time.process_time() - started < 1.0, (n, glob.pattern[:60])


# A reference matcher written independently (exponential, fine for tiny inputs).
def _reference(glob: str, path: str) -> bool:
    anchored = "/" in glob.rstrip("/")
    directory = glob.endswith("/")
    parts = [part for part in glob.strip("/").split("/") if part]
    segments = ["**" if set(part) == {"*"} and len(part) >= 2 else part for part in parts]
    if not anchored:
        segments.insert(0, "**")
    if directory:
        segments.append("**")
    names = tuple(path.split("/"))

    @functools.cache
    def match(i: int, j: int) -> bool:
        if i == len(segments):
            return j == len(names)
        if segments[i] == "**":
            if i == len(segments) - 1:  # trailing: one or more names
                return j < len(names)
            return any(match(i + 1, k) for k in range(j, len(names) + 1))
        return j < len(names) and _name(segments[i], names[j]) and match(i + 1, j + 1)

    return match(0, 0)


def _name(pattern: str, name: str) -> bool:
    if not pattern:
        return not name
    head = pattern[0]
    if head == "*":
        return any(_name(pattern.lstrip("*"), name[k:]) for k in range(len(name) + 1))
    if not name:
        return False
    if head == "[":
        end = pattern.index("]")
        return name[0] in pattern[1:end] and _name(pattern[end + 1 :], name[1:])
    return (head == "?" or head == name[0]) and _name(pattern[1:], name[1:])


_PIECES = st.sampled_from(["a", "b", "*", "**", "?", "/", "[ab]", "/**/"])


@settings(max_examples=400, deadline=None)
@given(
    st.lists(_PIECES, min_size=1, max_size=8).map("".join),
    st.lists(st.sampled_from(["a", "b", "/"]), min_size=1, max_size=10).map("".join),
)
def test_matching_agrees_with_a_reference_matcher(glob: str, path: str) -> None:
    path = "/".join(part for part in path.split("/") if part) or "a"
    if not glob.strip("/"):
        return
    assert compile_glob(glob).matches(path) is _reference(glob, path), (glob, path)
