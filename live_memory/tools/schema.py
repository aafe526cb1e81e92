"""The exploration tools' definitions, Anthropic-native (`name`, `description`, `input_schema`).

Read, Grep and Glob keep Claude Code's names and core parameters so a model trained on them
feels at home; the divergences are deliberate (workspace-relative paths, case-insensitive Grep
by default, a `limit` on Glob). These definitions never change at run time: they sit in the
cached prompt prefix.
"""

from __future__ import annotations

import logging
from typing import Final

from live_memory.config.constants import (
    FIND_PATHS_DEFAULT_DEPTH,
    FIND_PATHS_DEFAULT_LIMIT,
    GIT_SEARCH_DEFAULT_LIMIT,
    GLOB_DEFAULT_LIMIT,
    GREP_DEFAULT_HEAD_LIMIT,
    READ_DEFAULT_LIMIT_LINES,
)
from live_memory.providers import ToolSpec
from live_memory.tools.symbols import SYMBOL_KINDS

__all__ = ["TOOL_NAMES", "TOOL_SPECS"]

logger = logging.getLogger(__name__)

# Every request carries these definitions, so each word is paid on every model call: they say
# what a model needs to call a tool well (output shape, defaults, what narrows a search) and
# no more. Paths being workspace-relative is said once, in the system prompt. No
# `additionalProperties: false`: the tools ignore unknown arguments anyway (they accept
# aliases), and the flag cost ~60 prompt tokens per request.
_STR: Final = {"type": "string"}
_INT: Final = {"type": "integer", "minimum": 1}

READ = ToolSpec(
    name="Read",
    description=(
        "Read a workspace text file as numbered lines (like `cat -n`), the first "
        f"{READ_DEFAULT_LIMIT_LINES} by default; `offset` (1-based start line) and `limit` "
        "(line count) read a range. Secret files, binaries and paths outside the workspace "
        "are refused; secret values show as [redacted]. Grep first, then Read the range."
    ),
    input_schema={
        "type": "object",
        "properties": {"file_path": _STR, "offset": _INT, "limit": _INT},
        "required": ["file_path"],
    },
)

GREP = ToolSpec(
    name="Grep",
    description=(
        "Search file contents by regex (ripgrep syntax, per line; escape literals: 'foo\\('). "
        'Case-insensitive unless "-i": false. output_mode: files_with_matches (default), '
        "content (path:line:text) or count. Narrow with `path` (directory or file) and `glob` "
        f"('*.py', '!tests/**'). head_limit caps entries (default {GREP_DEFAULT_HEAD_LIMIT}). "
        "Respects .gitignore."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "pattern": _STR,
            "path": _STR,
            "glob": _STR,
            "output_mode": {"type": "string", "enum": ["files_with_matches", "content", "count"]},
            "-i": {"type": "boolean"},
            "head_limit": {"type": "integer", "minimum": 0},
        },
        "required": ["pattern"],
    },
)

GLOB = ToolSpec(
    name="Glob",
    description=(
        "Find files by path pattern, sorted: '*' within a directory, '**' across, '{a,b}' "
        "either. Without '/' it matches names at any depth ('*.md'); with '/' it is anchored "
        f"at `path` (default root). At most `limit` (default {GLOB_DEFAULT_LIMIT}). "
        "Respects .gitignore."
    ),
    input_schema={
        "type": "object",
        "properties": {"pattern": _STR, "path": _STR, "limit": _INT},
        "required": ["pattern"],
    },
)

FIND_PATHS = ToolSpec(
    name="find_paths",
    description=(
        "List files and directories under `path` (default root), like `find`, "
        f"{FIND_PATHS_DEFAULT_DEPTH} levels deep by default (`max_depth`); directories end "
        "in '/' with their file count. `name`: case-insensitive glob on the last part; `type`: "
        f"'f' or 'd'; `limit` (default {FIND_PATHS_DEFAULT_LIMIT}). Respects .gitignore."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "path": _STR,
            "name": _STR,
            "type": {"type": "string", "enum": ["f", "d"]},
            "max_depth": _INT,
            "limit": _INT,
        },
    },
)

GET_CHANGED_FILES = ToolSpec(
    name="get_changed_files",
    description=(
        "Uncommitted changes (`git status`): each path, how it changed, staged or not, and "
        "the branch. What is being worked on now."
    ),
    input_schema={"type": "object", "properties": {}},
)

GIT_SEARCH = ToolSpec(
    name="git_search",
    description=(
        "Commit history (`git log`), newest first: WHY code is the way it is. `query`: words "
        "the message must all contain; `path`: commits touching it; `limit` (default "
        f"{GIT_SEARCH_DEFAULT_LIMIT}). Shows hash, date, author, message, files; "
        "`patch`: true shows the diffs."
    ),
    input_schema={
        "type": "object",
        "properties": {"query": _STR, "path": _STR, "limit": _INT, "patch": {"type": "boolean"}},
    },
)

FIND_SYMBOL = ToolSpec(
    name="find_symbol",
    description=(
        "Where a function, class, method or type is defined, from the code index: "
        "'path:line [kind] name: signature'. 'Class.method' narrows it; `kind`: "
        + ", ".join(SYMBOL_KINDS)
        + "."
    ),
    input_schema={
        "type": "object",
        "properties": {"name": _STR, "kind": _STR, "limit": _INT},
        "required": ["name"],
    },
)

OUTLINE = ToolSpec(
    name="outline",
    description="A source file's imports and definitions (line, kind, name, signature).",
    input_schema={"type": "object", "properties": {"path": _STR}, "required": ["path"]},
)

TOOL_SPECS: tuple[ToolSpec, ...] = (
    READ,
    GREP,
    GLOB,
    FIND_PATHS,
    GET_CHANGED_FILES,
    GIT_SEARCH,
    FIND_SYMBOL,
    OUTLINE,
)
TOOL_NAMES: tuple[str, ...] = tuple(spec.name for spec in TOOL_SPECS)
