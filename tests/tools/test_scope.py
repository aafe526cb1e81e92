"""The batch visibility test (20k paths at once) must say what `Scope.visible` says path by path."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from live_memory.config.constants import DEFAULT_SECRET_PATH_PATTERNS
from live_memory.tools.scope import Scope

NAME_PARTS = [".env", ".ENV", "id_rsa", "x.pem", "Server.KEY", "secrets.", "credentials", "a", "b"]
PATTERN_SETS = [
    DEFAULT_SECRET_PATH_PATTERNS,
    ("*.KEY", "config/*.yml", "[!]x]ab*c", "sec?ret", "a[b", "*"),
    ("x",),
    (),
]
path_names = st.lists(
    st.one_of(st.sampled_from(NAME_PARTS), st.text("abcXYZ.-_/\\\u0130K\u017f\u00e9", max_size=12)),
    min_size=1,
    max_size=4,
).map("/".join)


@settings(max_examples=300, deadline=None)
@given(
    paths=st.lists(path_names, max_size=30),
    patterns=st.sampled_from(PATTERN_SETS),
    globs=st.sampled_from([(), ("a/*",), ("*.pem", "b*")]),
)
def test_invisible_paths_are_exactly_the_paths_visible_refuses(
    paths: list[str], patterns: tuple[str, ...], globs: tuple[str, ...]
) -> None:
    scope = Scope(root=Path("/"), secret_patterns=patterns, file_globs=globs)
    assert scope.invisible_paths(paths) == {path for path in paths if not scope.visible(path)}


def test_invisible_paths_finds_secrets_among_many_plain_paths() -> None:
    scope = Scope(root=Path("/"), secret_patterns=DEFAULT_SECRET_PATH_PATTERNS, file_globs=())
    plain = [f"pkg{i % 50}/mod_{i}.py" for i in range(5000)]
    secret = ["deploy/Server.PEM", ".env", "app/.env.local", "home\\id_rsa"]
    assert scope.invisible_paths([*plain, *secret]) == set(secret)
