"""The one glob dialect (`**/*.py`, `src/*.{ts,tsx}`), matched in time linear in the path.

Every caller that matches workspace paths against a pattern uses this module: the Glob tool,
Grep's `glob`, preload globs, the monitoring scope (`file_globs`) in the tools, the watcher,
ingest and the tree, and find_paths' `name`. The dialect is git's and ripgrep's:

- `*` and `?` stay within one path segment; `[...]` is a class (`[!...]` negated), never `/`;
- `**` as a whole segment is zero or more directories (`a/**/b`), at the end everything
  below (`docs/**`); inside a segment it is a plain `*`;
- `{a,b}` alternatives (nested too); `\\` escapes the next character;
- a pattern without `/` (other than a trailing one) matches a name at any depth, as a
  `.gitignore` line does; one with `/` is anchored at the base; `dir/` means all below `dir`.

Why not `fnmatch`/`re` translations as they are: a pattern such as `**/` repeated and then a
name that never matches makes a backtracking engine try every way of splitting the path, which
grows exponentially and holds the GIL (the whole server freezes). Here braces are expanded
first (at most GLOB_MAX_ALTERNATIVES alternatives, else the pattern is refused), and each
alternative becomes a regex that cannot backtrack across choices: a piece between two stars
is matched at its leftmost place inside an atomic group (`(?>...)`, which is also correct,
since a later star can absorb whatever an earlier placement leaves), and the blocks between two
`**` are placed the same way at segment boundaries. So a match costs
O(len(pattern) * len(path)) steps whatever the input.
"""

from __future__ import annotations

import functools
import logging
import re
from dataclasses import dataclass

__all__ = [
    "GLOB_MAX_ALTERNATIVES",
    "GLOB_MAX_PATTERN_CHARS",
    "GlobSet",
    "PathGlob",
    "compile_glob",
    "glob_set",
]

logger = logging.getLogger(__name__)

GLOB_MAX_PATTERN_CHARS = 1000
"""A longer pattern is refused (no real path glob is this long)."""
GLOB_MAX_ALTERNATIVES = 128
"""Brace expansion past this many alternatives is refused (`{a,b}` x 8 is 256)."""

_STAR, _GLOBSTAR, _SEP = "*", "**", "/"
# A token is one of the three markers above, or ("=", regex) for one character's regex.
_Token = str | tuple[str, str]
_Node = _Token | list[list["_Node"]]  # a list of alternatives, each a sequence of nodes
_ANY_DIRS = "(?:[^/]*/)*"  # zero or more whole directories; unambiguous (each ends at a /)


@dataclass(frozen=True, slots=True)
class PathGlob:
    """One compiled pattern; `matches` a relative POSIX path (no leading './')."""

    pattern: str
    regex: re.Pattern[str]

    def matches(self, path: str) -> bool:
        return self.regex.fullmatch(path) is not None


@dataclass(frozen=True, slots=True)
class GlobSet:
    """Several patterns: a path matches when any of them does (none given: nothing does)."""

    patterns: tuple[str, ...]
    regex: re.Pattern[str] | None

    def matches(self, path: str) -> bool:
        return self.regex is not None and self.regex.fullmatch(path) is not None


def compile_glob(pattern: str, *, ignore_case: bool = False, anchored: bool = False) -> PathGlob:
    """Compile one pattern. Raises ValueError (the message names the glob) for an empty
    pattern, one that climbs out with `..`, or one too long or with too many alternatives.

    `anchored`: a pattern without '/' names a file at the base only (preload's
    `README.md` is the root's README), as if written with a leading '/'.
    """
    regex = _translate(pattern, anchored=anchored)
    return PathGlob(pattern, re.compile(regex, _flags(ignore_case)))


@functools.lru_cache(maxsize=64)
def glob_set(patterns: tuple[str, ...], *, ignore_case: bool = False) -> GlobSet:
    """Compile configured patterns once (cached); an invalid one is logged and left out."""
    parts: list[str] = []
    for pattern in patterns:
        try:
            parts.append(_translate(pattern))
        except ValueError as exc:
            logger.warning("glob %r ignored: %s", pattern, exc)
    regex = re.compile("|".join(f"(?:{p})" for p in parts), _flags(ignore_case)) if parts else None
    return GlobSet(patterns, regex)


def _flags(ignore_case: bool) -> re.RegexFlag:
    return re.DOTALL | (re.IGNORECASE if ignore_case else re.NOFLAG)


def _translate(pattern: str, *, anchored: bool = False) -> str:
    glob = pattern.strip()
    if len(glob) > GLOB_MAX_PATTERN_CHARS:
        raise ValueError(f"glob is {len(glob)} characters, over {GLOB_MAX_PATTERN_CHARS}")
    while glob.startswith("./"):
        glob = glob[2:]
    directory = glob.endswith("/")  # `docs/` means everything in docs
    anchored = anchored or "/" in glob.rstrip("/")
    glob = glob.strip("/")
    if not glob:
        raise ValueError(f"empty glob pattern {pattern!r}")
    alternatives: list[str] = []
    for tokens in _expand(_parse(glob, 0, 0)[0]):
        segments = _segments(tokens, pattern)
        if not segments:
            continue
        if not anchored and segments[0] != [_GLOBSTAR]:
            segments.insert(0, [_GLOBSTAR])
        if directory and segments[-1] != [_GLOBSTAR]:
            segments.append([_GLOBSTAR])
        alternatives.append(_path_regex(segments))
    if not alternatives:
        raise ValueError(f"empty glob pattern {pattern!r}")
    unique = list(dict.fromkeys(alternatives))
    return unique[0] if len(unique) == 1 else "|".join(f"(?:{a})" for a in unique)


def _parse(glob: str, index: int, depth: int) -> tuple[list[_Node], int]:
    """Nodes from `index` up to a top-level ',' or '}' (inside braces) or the end."""
    nodes: list[_Node] = []
    while index < len(glob):
        char = glob[index]
        if depth and char in ",}":
            break
        if char == "\\" and index + 1 < len(glob):
            nodes.append(("=", re.escape(glob[index + 1])))
            index += 2
            continue
        if char == "*":
            end = index
            while end < len(glob) and glob[end] == "*":
                end += 1
            nodes.append(_GLOBSTAR if end - index >= 2 else _STAR)
            index = end
            continue
        if char == "[" and (end := _class_end(glob, index)) > 0:
            nodes.append(("=", _class(glob[index + 1 : end])))
            index = end + 1
            continue
        if char == "{" and _brace_closes(glob, index):
            options: list[list[_Node]] = []
            index += 1
            while True:
                option, index = _parse(glob, index, depth + 1)
                options.append(option)
                if index >= len(glob):  # cannot happen: `_brace_closes` said it closes
                    raise ValueError(f"glob {glob!r} has an unclosed brace")
                index += 1  # past ',' or '}'
                if glob[index - 1] == "}":
                    break
            nodes.append(options)
            continue
        if char == "/":
            nodes.append(_SEP)
        else:
            nodes.append(("=", "[^/]" if char == "?" else re.escape(char)))
        index += 1
    return nodes, index


def _expand(nodes: list[_Node]) -> list[list[_Token]]:
    """Every brace-free token sequence; refuses more than GLOB_MAX_ALTERNATIVES."""
    results: list[list[_Token]] = [[]]
    for node in nodes:
        if not isinstance(node, list):
            for tokens in results:
                tokens.append(node)
            continue
        choices = [tail for option in node for tail in _expand(option)]
        if len(results) * len(choices) > GLOB_MAX_ALTERNATIVES:
            raise ValueError(
                f"glob braces expand to more than {GLOB_MAX_ALTERNATIVES} alternatives"
            )
        results = [head + tail for head in results for tail in choices]
    return results


def _segments(tokens: list[_Token], pattern: str) -> list[list[_Token]]:
    """Split at '/', drop empty segments, mark `**` segments, collapse repeated ones."""
    segments: list[list[_Token]] = []
    current: list[_Token] = []
    for token in [*tokens, _SEP]:
        if token != _SEP:
            current.append(token)
            continue
        if not current:
            continue
        if all(t in (_STAR, _GLOBSTAR) for t in current) and _GLOBSTAR in current:
            current = [_GLOBSTAR]
        else:  # `**` inside a segment is a plain star
            current = [_STAR if t == _GLOBSTAR else t for t in current]
        if current == [("=", r"\.")] * 2:
            raise ValueError(f"glob {pattern!r} must not contain '..'")
        if not (current == [_GLOBSTAR] and segments and segments[-1] == [_GLOBSTAR]):
            segments.append(current)
        current = []
    return segments


def _path_regex(segments: list[list[_Token]]) -> str:
    """Blocks of plain segments between `**`: the first anchored at the start, the middle
    ones placed leftmost (atomically), the last one anchored at the end."""
    blocks: list[list[str]] = [[]]
    for segment in segments:
        if segment == [_GLOBSTAR]:
            blocks.append([])
        else:
            blocks[-1].append(_segment_regex(segment))
    if len(blocks) == 1:
        return "/".join(blocks[0])
    first, *middle, last = ["/".join(block) for block in blocks]
    out = f"{first}/" if first else ""
    out += "".join(f"(?>{_ANY_DIRS}?{block}/)" for block in middle)
    # A trailing `**` is one or more further segments: anything, as long as it is not empty.
    return out + (f"{_ANY_DIRS}{last}" if last else ".+")


def _segment_regex(tokens: list[_Token]) -> str:
    """One segment: fixed-width pieces between stars; the inner pieces leftmost, atomically."""
    pieces: list[str] = [""]
    for token in tokens:
        if token == _STAR:
            pieces.append("")
        elif isinstance(token, tuple):
            pieces[-1] += token[1]
    if len(pieces) == 1:
        return pieces[0]
    first, *middle, last = pieces
    inner = "".join(f"(?>[^/]*?{piece})" for piece in middle if piece)
    return f"{first}{inner}[^/]*{last}"


def _class_end(glob: str, start: int) -> int:
    """Index of the ']' closing the class opened at `start`, or -1 (then '[' is literal)."""
    index = start + 1
    if index < len(glob) and glob[index] in "!^":
        index += 1
    if index < len(glob) and glob[index] == "]":  # a leading ] is a member
        index += 1
    return glob.find("]", index)


def _class(inner: str) -> str:
    negate = inner[:1] in ("!", "^")
    if negate:
        inner = inner[1:]
    # Escape every member so `re` never sees set-operation syntax (`&&`, `--`, `~~`); a `-`
    # between two members stays a range.
    escaped = "".join(
        char
        if char == "-"
        and 0 < index < len(inner) - 1
        and "-" not in (inner[index - 1], inner[index + 1])
        else re.escape(char)
        for index, char in enumerate(inner)
    )
    # A class never matches the separator, negated or not.
    return f"[^/{escaped}]" if negate else f"(?!/)[{escaped}]"


def _brace_closes(glob: str, start: int) -> bool:
    depth = 0
    index = start
    while index < len(glob):
        char = glob[index]
        if char == "\\":
            index += 2
            continue
        if char == "[" and (end := _class_end(glob, index)) > 0:
            index = end + 1  # a class is skipped as `_parse` reads it
            continue
        depth += (char == "{") - (char == "}")
        if depth == 0:
            return True
        index += 1
    return False
