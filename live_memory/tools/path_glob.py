"""Shell-style path globs (`**/*.py`, `src/*.{ts,tsx}`) compiled to regular expressions.

`*` and `?` stay within one path segment, `**` crosses segments, `[...]` and `{a,b}` work as
in git and ripgrep. A pattern without `/` matches a file's name at any depth, the way a
`.gitignore` line or `rg --glob` does; one with `/` is anchored at the search directory.
"""

from __future__ import annotations

import logging
import re

__all__ = ["compile_glob"]

logger = logging.getLogger(__name__)


def compile_glob(pattern: str) -> re.Pattern[str]:
    """Compile a glob to a regex that full-matches a relative POSIX path.

    Raises ValueError for an empty pattern or one that climbs out with `..`.
    """
    glob = pattern.strip()
    while glob.startswith("./"):
        glob = glob[2:]
    if glob.endswith("/"):  # `docs/` means everything in docs
        glob += "**"
    anchored = "/" in glob.rstrip("/")
    glob = glob.strip("/")
    if not glob:
        raise ValueError("empty glob pattern")
    if ".." in glob.split("/"):
        raise ValueError(f"glob {pattern!r} must not contain '..'")
    body = _translate(glob)
    prefix = "" if anchored else "(?:.*/)?"
    return re.compile(f"{prefix}{body}", re.DOTALL)


def _translate(glob: str) -> str:
    out: list[str] = []
    index = 0
    while index < len(glob):
        char = glob[index]
        if glob.startswith("**", index):
            index += 2
            if glob.startswith("/", index):  # `**/` : zero or more whole directories
                out.append("(?:.*/)?")
                index += 1
            else:
                out.append(".*")
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = _class_end(glob, index)
            if end < 0:
                out.append(re.escape(char))
            else:
                out.append(_translate_class(glob[index + 1 : end]))
                index = end
        elif char == "{":
            end = _brace_end(glob, index)
            if end < 0:
                out.append(re.escape(char))
            else:
                options = _split_top_level(glob[index + 1 : end])
                out.append("(?:" + "|".join(_translate(option) for option in options) + ")")
                index = end
        elif char == "\\" and index + 1 < len(glob):
            index += 1
            out.append(re.escape(glob[index]))
        else:
            out.append(re.escape(char))
        index += 1
    return "".join(out)


def _class_end(glob: str, start: int) -> int:
    index = start + 1
    if index < len(glob) and glob[index] in "!^":
        index += 1
    if index < len(glob) and glob[index] == "]":  # a leading ] is literal
        index += 1
    end = glob.find("]", index)
    return end


def _translate_class(inner: str) -> str:
    negate = inner[:1] in ("!", "^")
    if negate:
        inner = inner[1:]
    # Escape every member so Python never sees set-operation syntax (`&&`, `--`, `~~`); a `-`
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


def _brace_end(glob: str, start: int) -> int:
    depth = 0
    for index in range(start, len(glob)):
        if glob[index] == "{":
            depth += 1
        elif glob[index] == "}":
            depth -= 1
            if depth == 0:
                return index
    return -1


def _split_top_level(inner: str) -> list[str]:
    options: list[str] = []
    depth = 0
    current: list[str] = []
    for char in inner:
        if char == "," and depth == 0:
            options.append("".join(current))
            current = []
            continue
        depth += (char == "{") - (char == "}")
        current.append(char)
    options.append("".join(current))
    return options
