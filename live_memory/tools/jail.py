"""The one path jail: every open of a workspace file goes through `open_in_root` here
(reading what was opened: `workspace_read.py`).

Every path a model (or a hook payload) names is checked by name first (`resolve_in_root`:
NUL bytes, encodings, `..` and links leaving the root are refused, for messages and for
deciding what to search), and every open goes through `open_in_root`: relative to the root's
descriptor, confined by the kernel or by a no-follow walk (see `beneath`), so swapping a
directory for a symlink between the check and the open gains nothing. What was opened is
then checked again by where it really is: secret files, git's own files (`.git` at any
depth, and a git directory a `.git` file points to) and anything but a regular file are
refused, and no open blocks on a FIFO or a device.
"""

from __future__ import annotations

import errno
import logging
import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from live_memory.config.constants import (
    DEFAULT_SECRET_PATH_PATTERNS,
    JAIL_REALPATH_PASSES,
)
from live_memory.errors import LiveMemoryError, PathOutsideWorkspace
from live_memory.hygiene import is_secret_path
from live_memory.tools.beneath import OpenedPath, open_beneath, open_each_beneath
from live_memory.tools.git_dir import git_internal, pointed_git_dirs

__all__ = [
    "UnreadableFile",
    "UnreadableReason",
    "check_regular",
    "git_internal",
    "open_files_in_root",
    "open_in_root",
    "pointed_git_dirs",
    "relative_to_root",
    "resolve_in_root",
]

logger = logging.getLogger(__name__)

UnreadableReason = Literal[
    "missing", "directory", "special", "too_large", "binary", "secret", "unreadable", "git"
]


class UnreadableFile(LiveMemoryError):
    """A path inside the workspace that is not a readable text file for the model.

    `reason` says why: missing, directory, special (FIFO, socket, device), too_large, binary,
    secret, git (git's own files) or unreadable (permissions, symlink loops). The message is
    written for the model and names the path.
    """

    def __init__(self, message: str, reason: UnreadableReason) -> None:
        super().__init__(message)
        self.reason: UnreadableReason = reason


def resolve_in_root(root: Path, user_path: str) -> Path:
    """Resolve `user_path` (workspace-relative or absolute) to a real path under `root`.

    Symlinks are resolved before the check, so a link pointing outside is refused like `..`.
    The path need not exist. Raises PathOutsideWorkspace for NUL bytes, unencodable text and
    anything that resolves outside the root.
    """
    return Path(_jail(os.path.realpath(root), user_path))


def _check_text(user_path: object) -> None:
    """Refuse what is not a path string the filesystem can take (before any resolution)."""
    if not isinstance(user_path, str):
        raise PathOutsideWorkspace(f"path must be a string, got {type(user_path).__name__}")
    if "\x00" in user_path:
        raise PathOutsideWorkspace("path contains a NUL byte")
    try:
        os.fsencode(user_path)
    except UnicodeError:
        raise PathOutsideWorkspace(
            f"path {user_path!r} cannot be encoded for this filesystem"
        ) from None


def _jail(real_root: str, user_path: str) -> str:
    _check_text(user_path)
    candidate = user_path if os.path.isabs(user_path) else os.path.join(real_root, user_path)
    try:
        resolved = _realpath_fixed_point(candidate)
    except (OSError, ValueError) as exc:
        raise PathOutsideWorkspace(f"path {user_path!r} cannot be resolved: {exc}") from None
    if not _is_within(resolved, real_root):
        raise PathOutsideWorkspace(
            f"path {user_path!r} is outside the workspace {real_root}; "
            "use a path relative to the workspace root"
        )
    return resolved


def _realpath_fixed_point(path: str) -> str:
    """`os.path.realpath` until nothing is left to resolve.

    realpath stops resolving at a symlink loop and returns the rest of the path as written
    (`loop/../link_out` comes back as `root/link_out`, a link to outside), so one pass can
    leave a link in the result. A bounded number of passes reaches the fixed point; a path
    that does not settle is refused.
    """
    for _ in range(JAIL_REALPATH_PASSES):
        again = os.path.realpath(path)
        if again == path:
            return path
        path = again
    raise ValueError("too many levels of symbolic links")


def relative_to_root(root: Path, resolved: Path) -> str:
    """The workspace-relative POSIX form of a path `resolve_in_root` returned ('' for root)."""
    return _relative(str(resolved), os.path.realpath(root))


def _relative(resolved: str, real_root: str) -> str:
    rel = os.path.relpath(resolved, real_root)
    return "" if rel == os.curdir else Path(rel).as_posix()


def open_in_root(
    root: Path,
    rel_or_abs: str,
    *,
    secret_patterns: Sequence[str] = DEFAULT_SECRET_PATH_PATTERNS,
    directory: bool = False,
) -> OpenedPath:
    """Open a workspace path without following anything out of the root (race-free).

    Returns the descriptor (the caller closes it) and where it really is. Raises
    PathOutsideWorkspace when the path leads outside, UnreadableFile when it is missing,
    secret (by the name given or by where it leads) or inside a git directory.
    """
    real_root = os.path.realpath(root)
    rel = _lexical(real_root, rel_or_abs)
    given = os.path.normpath(rel) if rel else ""
    if given and _refused(real_root, given, secret_patterns):
        raise _refusal(given, git=git_internal(real_root, given))
    try:
        opened = open_beneath(real_root, rel, directory=directory)
    except FileNotFoundError:
        raise UnreadableFile(f"{given or rel_or_abs} does not exist", "missing") from None
    except NotADirectoryError:
        kind = "is not a directory" if directory else "does not exist (a parent is a file)"
        raise UnreadableFile(f"{given} {kind}", "missing") from None
    except OSError as exc:
        if exc.errno == errno.EXDEV:
            raise PathOutsideWorkspace(
                f"path {rel_or_abs!r} is outside the workspace {real_root}; "
                "use a path relative to the workspace root"
            ) from None
        raise UnreadableFile(
            f"{given or rel_or_abs} cannot be opened: {exc.strerror}", "unreadable"
        ) from None
    # The name the caller used counts (a link called `.env` stays secret wherever it
    # points), and so does where it leads.
    real = opened.rel
    if real and _refused(real_root, real, secret_patterns):
        os.close(opened.fd)
        raise _refusal(given or real, git=git_internal(real_root, real))
    return opened


def open_files_in_root(
    root: Path, rels: Sequence[str], *, secret_patterns: Sequence[str]
) -> dict[str, int]:
    """The regular files of the workspace-relative `rels` that `open_in_root` would open (and
    `check_regular` keep), each by its descriptor (the caller closes them); the others are
    left out. One root descriptor and one look at the root's `.git` serve them all."""
    real_root = os.path.realpath(root)
    git_dirs = pointed_git_dirs(real_root)

    def refused(rel: str) -> bool:
        return _refused(real_root, rel, secret_patterns, git_dirs)

    named = [rel for rel in rels if "\0" not in rel and not refused(os.path.normpath(rel))]
    kept: dict[str, int] = {}
    for rel, opened in zip(named, open_each_beneath(real_root, named), strict=True):
        if opened is None:
            continue
        if (opened.rel != rel and refused(opened.rel)) or not stat.S_ISREG(
            os.fstat(opened.fd).st_mode
        ):
            os.close(opened.fd)
        else:
            kept[rel] = opened.fd
    return kept


def _refused(
    real_root: str,
    rel: str,
    secret_patterns: Sequence[str],
    git_dirs: tuple[str, ...] | None = None,
) -> bool:
    """Whether the jail refuses `rel` by name: a secret, or inside a git directory."""
    return git_internal(real_root, rel, git_dirs) or is_secret_path(rel, secret_patterns)


def _refusal(shown: str, *, git: bool) -> UnreadableFile:
    if git:
        return UnreadableFile(
            f"{shown} is inside a git directory (repository internals such as config hold "
            "credentials); use git_search or get_changed_files for history and changes",
            "git",
        )
    return UnreadableFile(
        f"{shown} looks like a secret file (keys, credentials, .env); its contents are withheld",
        "secret",
    )


def _lexical(real_root: str, user_path: str) -> str:
    """The user's path relative to the root, by name only (the open confines it)."""
    _check_text(user_path)
    if not os.path.isabs(user_path):
        return user_path
    if _is_within(os.path.normpath(user_path), real_root):
        return _relative(os.path.normpath(user_path), real_root)
    # The root named through a link (macOS /tmp -> /private/tmp): map the name.
    return _relative(_jail(real_root, user_path), real_root)


def check_regular(fd: int, shown: str) -> int:
    """`fd`, or UnreadableFile (closing `fd`) unless it is a regular file."""
    try:
        _require_regular(os.fstat(fd).st_mode, shown)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _require_regular(mode: int, shown: str) -> None:
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        raise UnreadableFile(
            f"{shown} is a directory; use find_paths or Glob to list it", "directory"
        )
    kind = "FIFO" if stat.S_ISFIFO(mode) else "socket" if stat.S_ISSOCK(mode) else "device file"
    raise UnreadableFile(f"{shown} is a {kind}, not a regular file; it cannot be read", "special")


def _is_within(resolved: str, real_root: str) -> bool:
    if resolved == real_root:
        return True
    prefix = real_root if real_root.endswith(os.sep) else real_root + os.sep
    return resolved.startswith(prefix)
