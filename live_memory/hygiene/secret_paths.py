"""Secret files: which workspace paths no tool may open, list or return (`.env`, keys,
credential stores), whatever their content."""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Sequence

__all__ = ["is_secret_path"]


def is_secret_path(rel_path: str, patterns: Sequence[str]) -> bool:
    """True when `rel_path` (workspace-relative) matches a secret pattern.

    Each pattern is tried on the basename and on the whole path, case-insensitively: a file
    named `.ENV` or `Server.KEY` is as secret as its lower-case twin.
    """
    if not patterns:
        return False
    path = rel_path.replace("\\", "/").strip("/").lower()
    matcher = _matcher(tuple(patterns))
    return matcher.matches(path.rpartition("/")[2]) or matcher.matches(path)


class _Matcher:
    """fnmatch for a fixed pattern set, with plain string tests for the common shapes.

    Listing tools test every file of a large workspace; `*.pem`, `id_rsa*` and `.netrc` are
    endswith / startswith / equality checks, far cheaper than a regex per pattern.
    """

    __slots__ = ("exact", "prefixes", "regex", "suffixes")

    def __init__(self, patterns: tuple[str, ...]) -> None:
        exact: set[str] = set()
        prefixes: list[str] = []
        suffixes: list[str] = []
        complex_patterns: list[str] = []
        for pattern in (p.lower() for p in patterns):
            if not _has_wildcard(pattern):
                exact.add(pattern)
            elif pattern.endswith("*") and not _has_wildcard(pattern[:-1]):
                prefixes.append(pattern[:-1])
            elif pattern.startswith("*") and not _has_wildcard(pattern[1:]):
                suffixes.append(pattern[1:])
            else:
                complex_patterns.append(fnmatch.translate(pattern))
        self.exact = frozenset(exact)
        self.prefixes = tuple(prefixes)
        self.suffixes = tuple(suffixes)
        self.regex = re.compile("|".join(complex_patterns)) if complex_patterns else None

    def matches(self, text: str) -> bool:
        return (
            text in self.exact
            or text.startswith(self.prefixes)
            or text.endswith(self.suffixes)
            or (self.regex is not None and self.regex.match(text) is not None)
        )


def _has_wildcard(pattern: str) -> bool:
    return any(char in pattern for char in "*?[")


@functools.lru_cache(maxsize=32)
def _matcher(patterns: tuple[str, ...]) -> _Matcher:
    return _Matcher(patterns)
