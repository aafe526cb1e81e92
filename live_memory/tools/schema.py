"""The exploration tools' definitions, Anthropic-native (`name`, `description`, `input_schema`).

Read, Grep and Glob keep Claude Code's names and core parameters so a model trained on them
feels at home; the divergences are deliberate (workspace-relative paths, case-insensitive Grep
by default, a `limit` on Glob). These definitions never change at run time: they sit in the
cached prompt prefix.
"""

from __future__ import annotations

import logging

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

_PATH_NOTE = "Paths are relative to the workspace root (absolute paths inside it also work)."

READ = ToolSpec(
    name="Read",
    description=(
        "Read a text file from the workspace. Output is numbered like `cat -n` "
        "(line number, tab, line). By default returns the first "
        f"{READ_DEFAULT_LIMIT_LINES} lines; for long files pass `offset` (1-based line to "
        "start at) and `limit` (number of lines). Very long lines are cut. Binary files, "
        "secret files (.env, keys, credentials) and anything outside the workspace are "
        "refused; secret-looking values are shown as [redacted]. Prefer Grep to find the "
        f"right place first, then Read just that range. {_PATH_NOTE}"
    ),
    input_schema={
        "type": "object",
        "properties": {
            "file_path": {"type": "string", "description": "File to read, e.g. 'src/app.py'."},
            "offset": {
                "type": "integer",
                "minimum": 1,
                "description": "1-based line number to start reading from. Default 1.",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "description": f"How many lines to read. Default {READ_DEFAULT_LIMIT_LINES}.",
            },
        },
        "required": ["file_path"],
        "additionalProperties": False,
    },
)

GREP = ToolSpec(
    name="Grep",
    description=(
        "Search file contents with a regular expression (ripgrep syntax, one line at a time). "
        'Case-insensitive unless you pass "-i": false. Respects .gitignore. Output modes: '
        "'files_with_matches' (default: just the matching file paths), 'content' (matching "
        "lines as path:line:text) and 'count' (matching lines per file). Narrow big searches "
        "with `path` (a directory or one file) and `glob` (e.g. '*.py', 'src/**/*.{ts,tsx}'). "
        "Escape regex characters for literal text, e.g. 'foo\\(' to find 'foo('. "
        f"{_PATH_NOTE}"
    ),
    input_schema={
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Regular expression to search for."},
            "path": {
                "type": "string",
                "description": "Directory or file to search in. Default: the whole workspace.",
            },
            "glob": {
                "type": "string",
                "description": "Only search files matching this glob, e.g. '*.js' or "
                "'tests/**/*.py'. Prefix with '!' to exclude.",
            },
            "output_mode": {
                "type": "string",
                "enum": ["files_with_matches", "content", "count"],
                "description": "What to show. Default 'files_with_matches'.",
            },
            "-i": {"type": "boolean", "description": "Case-insensitive search. Default true."},
            "head_limit": {
                "type": "integer",
                "minimum": 0,
                "description": "Show at most this many entries (files, or lines in content "
                f"mode). Default {GREP_DEFAULT_HEAD_LIMIT}.",
            },
        },
        "required": ["pattern"],
        "additionalProperties": False,
    },
)

GLOB = ToolSpec(
    name="Glob",
    description=(
        "Find files by path pattern, sorted by path. '*' matches within one directory, '**' "
        "across directories, '{a,b}' either. A pattern without '/' matches file names at any "
        "depth ('*.md' finds every Markdown file); one with '/' is anchored at `path` "
        "('src/*.py' only directly in src). Respects .gitignore. Use find_paths to list "
        f"directories. {_PATH_NOTE}"
    ),
    input_schema={
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Glob, e.g. '**/*.test.ts'."},
            "path": {
                "type": "string",
                "description": "Directory to search in. Default: the workspace root.",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "description": f"Most paths to return. Default {GLOB_DEFAULT_LIMIT}.",
            },
        },
        "required": ["pattern"],
        "additionalProperties": False,
    },
)

FIND_PATHS = ToolSpec(
    name="find_paths",
    description=(
        "List files and directories below a directory, like `find`, down to `max_depth` "
        "levels. Directories end with '/' and show how many files they hold. Filter by "
        "`name` (a case-insensitive glob on the last path part, e.g. 'readme*' or '*test*') "
        "and `type` ('f' files, 'd' directories). Good for seeing how a folder is laid out "
        f"before reading. Respects .gitignore. {_PATH_NOTE}"
    ),
    input_schema={
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "Directory to list. Default: the workspace root.",
            },
            "name": {"type": "string", "description": "Glob on the entry's own name."},
            "type": {
                "type": "string",
                "enum": ["f", "d"],
                "description": "'f' for files only, 'd' for directories only. Default both.",
            },
            "max_depth": {
                "type": "integer",
                "minimum": 1,
                "description": f"How many levels down to go. Default {FIND_PATHS_DEFAULT_DEPTH}.",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "description": f"Most entries to return. Default {FIND_PATHS_DEFAULT_LIMIT}.",
            },
        },
        "additionalProperties": False,
    },
)

GET_CHANGED_FILES = ToolSpec(
    name="get_changed_files",
    description=(
        "Show uncommitted changes in the workspace (`git status`): each changed path with "
        "whether it is modified, added, deleted, renamed or untracked, staged or not, plus "
        "the current branch. Use it to learn what is being worked on right now. Only works "
        "inside a git repository."
    ),
    input_schema={"type": "object", "properties": {}, "additionalProperties": False},
)

GIT_SEARCH = ToolSpec(
    name="git_search",
    description=(
        "Search the commit history (`git log`), newest first: the best way to learn WHY code "
        "is the way it is. `query` keeps commits whose message contains every word "
        "(case-insensitive); `path` keeps commits touching that file or directory (following "
        "renames for a file). Each commit shows hash, date, author, message and the files it "
        "changed; `patch`: true shows the diffs instead (long diffs are cut). Only works "
        "inside a git repository."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "description": "Words that must all appear in the commit message.",
            },
            "path": {
                "type": "string",
                "description": "Only commits that changed this file or directory.",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "description": f"Most commits to show. Default {GIT_SEARCH_DEFAULT_LIMIT}.",
            },
            "patch": {
                "type": "boolean",
                "description": "Include each commit's diff. Default false.",
            },
        },
        "additionalProperties": False,
    },
)

FIND_SYMBOL = ToolSpec(
    name="find_symbol",
    description=(
        "Where a function, class, method or type is defined, from the code index: "
        "'path:line [kind] name: signature — doc'. 'Class.method' narrows it."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "e.g. 'parse_config', 'Server.start'"},
            "kind": {"type": "string", "enum": ["any", *SYMBOL_KINDS]},
            "limit": {"type": "integer", "minimum": 1},
        },
        "required": ["name"],
        "additionalProperties": False,
    },
)

OUTLINE = ToolSpec(
    name="outline",
    description="A source file's imports and definitions (line, kind, name, signature).",
    input_schema={
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
        "additionalProperties": False,
    },
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
