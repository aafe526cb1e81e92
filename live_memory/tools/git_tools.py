"""The git explorers: get_changed_files (working-tree state) and git_search (history).

File names of secret files may appear (they are names, not contents); their diffs never do,
and every output passes through secret redaction like file content does.
"""

from __future__ import annotations

import logging
import re

from live_memory.config.constants import (
    GIT_SEARCH_DEFAULT_LIMIT,
    GIT_SEARCH_MAX_LIMIT,
    GIT_SEARCH_MAX_PATCH_CHARS,
)
from live_memory.errors import GitDirRefused
from live_memory.hygiene import is_secret_path, redact_secrets
from live_memory.tools.arguments import BadToolArguments, ToolArgs
from live_memory.tools.git_command import GitResult, GitUnavailable, run_git_concurrently
from live_memory.tools.outcome import ToolOutcome
from live_memory.tools.scope import Scope

__all__ = ["run_get_changed_files", "run_git_search"]

logger = logging.getLogger(__name__)

_STATES = {
    "M": "modified",
    "T": "type changed",
    "A": "added",
    "D": "deleted",
    "R": "renamed",
    "C": "copied",
}
_CONFLICTS = frozenset({"DD", "AU", "UD", "UA", "DU", "AA", "UU"})
_RECORD = "\x1e"
_COMMIT_FORMAT = f"--format={_RECORD}commit %h%nDate:   %ad%nAuthor: %an%n%n%w(0,4,4)%B"
_BLANK_RUN = re.compile(r"\n(?:[ ]*\n){2,}")
# Every file's diff starts here; its names are `a/x b/y`, or C-quoted (`"a/x\ty"`) when they
# hold a tab, newline, quote, backslash or (core.quotePath) a non-ASCII byte.
_DIFF_HEADER = re.compile(r"^diff --git (?P<names>.*)$", re.MULTILINE)
_QUOTED_NAME = re.compile(r'"((?:[^"\\]|\\.)*)"')
_C_ESCAPE = re.compile(r"\\([0-7]{1,3}|.)")
_C_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13}
_NOT_A_REPOSITORY = ToolOutcome(
    text="This workspace is not inside a git repository, so there is no git history or "
    "change list. Explore with Glob, find_paths, Grep and Read instead.",
    is_error=True,
)


def run_get_changed_files(scope: Scope, args: ToolArgs) -> ToolOutcome:
    """get_changed_files{}: `git status` for the workspace, explained in words."""
    ran = _in_work_tree(
        scope,
        [
            "status",
            "--porcelain=v1",
            "-z",
            "-b",
            "--untracked-files=all",
            "--ignore-submodules=dirty",  # a submodule's work tree would run its own config
            "--",
            ".",
        ],
    )
    if isinstance(ran, ToolOutcome):
        return ran
    prefix, result = ran
    if not result.ok:
        return ToolOutcome(
            text=f"get_changed_files: git status failed: {result.stderr}", is_error=True
        )
    records = result.stdout.decode("utf-8", errors="surrogateescape").split("\0")
    branch = ""
    changes: list[str] = []
    index = 0
    while index < len(records):
        record = records[index]
        index += 1
        if record.startswith("## "):
            branch = record[3:]
            continue
        if len(record) < 4:
            continue
        code, path = record[:2], _strip_prefix(record[3:], prefix)
        line = f"{path}  [{_describe(code)}]"
        if "R" in code or "C" in code:  # the next record is the original path
            original = _strip_prefix(records[index], prefix) if index < len(records) else "?"
            index += 1
            line = f"{path} (from {original})  [{_describe(code)}]"
        if scope.monitored(path):
            changes.append(line)
    where = f" (branch: {branch})" if branch else ""
    if not changes:
        return ToolOutcome(text=f"No uncommitted changes{where}: the working tree matches HEAD.")
    header = f"{len(changes)} changed path{'s' if len(changes) != 1 else ''}{where} (git status):"
    return ToolOutcome(text="\n".join([header, *sorted(changes)]))


def run_git_search(scope: Scope, args: ToolArgs) -> ToolOutcome:
    """git_search{query?, path?, limit?, patch?}: commit history by message words and/or path."""
    query = args.text("query", "grep", "message", "pattern")
    path = args.text("path", "file_path", "file")
    limit = args.integer(
        "limit",
        "max_results",
        "max_count",
        default=GIT_SEARCH_DEFAULT_LIMIT,
        minimum=1,
        maximum=GIT_SEARCH_MAX_LIMIT,
    )
    patch = args.flag("patch", "diff", "show_diff", default=False)
    resolved, rel = scope.locate(path)
    if not resolved.exists():
        raise BadToolArguments(f"git_search: path {path!r} does not exist in the workspace")
    command = ["log", "--no-color", "--date=short", f"--max-count={limit}", _COMMIT_FORMAT]
    words = query.split() if query else []
    if words:
        command += ["--regexp-ignore-case", "--fixed-strings", "--all-match"]
        command += [f"--grep={word}" for word in words]
    command += (  # fixed prefixes, whatever diff.noprefix or diff.mnemonicPrefix say
        ["--relative", "-p", "--no-ext-diff", "--no-textconv", "--src-prefix=a/", "--dst-prefix=b/"]
        if patch
        else ["--relative", "--name-status"]
    )
    if rel and resolved.is_file():
        command.append("--follow")  # history across renames; git allows it for one file only
    command += ["--", rel or "."]
    ran = _in_work_tree(scope, command)
    if isinstance(ran, ToolOutcome):
        return ran
    result = ran[1]
    if not result.ok:
        if "does not have any commits" in result.stderr:
            return ToolOutcome(text="git_search: this repository has no commits yet.")
        return ToolOutcome(text=f"git_search: git log failed: {result.stderr}", is_error=True)
    output = result.stdout.decode("utf-8", errors="replace")
    commits = [_tidy(record) for record in output.split(_RECORD) if record.strip()]
    if not commits:
        return ToolOutcome(text=f"No commits found{_search_phrase(words, rel)}.")
    shown = [_cap_commit(_withhold_secret_diffs(scope, commit)) for commit in commits]
    text, _ = redact_secrets("\n\n".join(shown))
    if len(commits) == limit:
        phrase = _search_phrase(words, rel)
        text += f"\n\n[showing the latest {limit} commits{phrase}; raise limit for more]"
    return ToolOutcome(text=text)


def _in_work_tree(scope: Scope, command: list[str]) -> tuple[str, GitResult] | ToolOutcome:
    """Run `git <command>` in the workspace with, beside it, the check that the workspace is
    in a git work tree: (the root's path inside the repository, '' at the top; the result),
    or the error outcome the model sees."""
    try:
        where, result = run_git_concurrently(
            scope.root, [["rev-parse", "--is-inside-work-tree", "--show-prefix"], command]
        )
    except GitUnavailable as exc:
        return ToolOutcome(text=f"git tools are unavailable: {exc}", is_error=True)
    except GitDirRefused as exc:
        if not exc.foreign:
            return _NOT_A_REPOSITORY
        return ToolOutcome(text=f"git tools are refused for this workspace: {exc}", is_error=True)
    lines = where.stdout.decode("utf-8", errors="surrogateescape").splitlines()
    if not where.ok or not lines or lines[0] != "true":
        return _NOT_A_REPOSITORY
    return (lines[1] if len(lines) > 1 else ""), result


def _strip_prefix(path: str, prefix: str) -> str:
    return path[len(prefix) :] if prefix and path.startswith(prefix) else path


def _describe(code: str) -> str:
    if code == "??":
        return "untracked"
    if code in _CONFLICTS:
        return "merge conflict"
    parts = []
    if code[0] in _STATES:
        parts.append(f"staged: {_STATES[code[0]]}")
    if code[1] in _STATES:
        parts.append(f"not staged: {_STATES[code[1]]}")
    return "; ".join(parts) or code.strip()


def _withhold_secret_diffs(scope: Scope, commit: str) -> str:
    """Replace the diff of every secret file in one commit's patch with a one-line note; a
    header whose names cannot be read is withheld too."""
    headers = list(_DIFF_HEADER.finditer(commit))
    if not headers:
        return commit
    pieces = [commit[: headers[0].start()]]
    for number, header in enumerate(headers):
        end = headers[number + 1].start() if number + 1 < len(headers) else len(commit)
        names = _diff_names(header.group("names"))
        if names is None or any(is_secret_path(n, scope.secret_patterns) for n in names):
            pieces.append(f"{header.group(0)}\n[diff of a secret file withheld]\n")
        else:
            pieces.append(commit[header.start() : end])
    return "".join(pieces)


def _diff_names(names: str) -> list[str] | None:
    """The two paths of a `diff --git` header (decoded from git's C quoting), or None."""
    if names.startswith('"') or ' "b/' in names:
        quoted = [_unquote(m.group(1)) for m in _QUOTED_NAME.finditer(names)]
        plain = _QUOTED_NAME.sub("", names).split()  # one side may be plain (a rename)
        paths = quoted + plain
    elif names.startswith("a/") and (len(names) - 3) % 2 == 0 and _same_halves(names):
        half = (len(names) - 1) // 2
        paths = [names[:half], names[half + 1 :]]  # `a/N b/N`: exact, spaces and all
    else:
        a, sep, b = names.partition(" b/")
        paths = [a, f"b/{b}"] if sep else []
    if len(paths) != 2 or not all(p[:2] in ("a/", "b/") for p in paths):
        return None
    return [path[2:] for path in paths]


def _same_halves(names: str) -> bool:
    half = (len(names) - 1) // 2
    return names[half] == " " and names[2:half] == names[half + 3 :]


def _unquote(body: str) -> str:
    """git's C quoting undone: `\\t`, `\\"`, `\\\\`, octal bytes (UTF-8 names)."""

    def byte(match: re.Match[str]) -> str:
        code = match.group(1)
        value = int(code, 8) if code[0] in "01234567" else _C_ESCAPES.get(code, ord(code))
        return chr(value)  # (as latin-1: re-encoded below)

    raw = _C_ESCAPE.sub(byte, body.encode("utf-8").decode("latin-1"))
    return raw.encode("latin-1").decode("utf-8", errors="replace")


def _tidy(record: str) -> str:
    # %B ends with a newline and git adds a blank line before the file list: squeeze them.
    return _BLANK_RUN.sub("\n\n", record.strip("\n"))


def _cap_commit(commit: str) -> str:
    if len(commit) <= GIT_SEARCH_MAX_PATCH_CHARS:
        return commit
    cut = commit.rfind("\n", 0, GIT_SEARCH_MAX_PATCH_CHARS)
    cut = cut if cut > 0 else GIT_SEARCH_MAX_PATCH_CHARS
    return (
        f"{commit[:cut]}\n[commit cut: {len(commit) - cut} more chars; use Read or a narrower path]"
    )


def _search_phrase(words: list[str], rel: str) -> str:
    parts = []
    if words:
        parts.append(f" with messages containing {' '.join(words)!r}")
    if rel:
        parts.append(f" touching {rel}")
    return "".join(parts)
