"""The one path jail, and the only code that opens workspace files.

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
import hashlib
import logging
import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from live_memory.config.constants import (
    BINARY_SNIFF_BYTES,
    DEFAULT_SECRET_PATH_PATTERNS,
    JAIL_REALPATH_PASSES,
    READ_MAX_FILE_BYTES,
)
from live_memory.errors import LiveMemoryError, PathOutsideWorkspace
from live_memory.hygiene import is_secret_path, looks_binary, redact_secrets
from live_memory.tools.beneath import OpenedPath, open_beneath
from live_memory.tools.git_dir import git_internal, pointed_git_dirs
from live_memory.tools.outcome import FileRead
from live_memory.tools.text import decode_text

__all__ = [
    "ListedFileReader",
    "UnreadableFile",
    "UnreadableReason",
    "check_regular",
    "current_sha256",
    "git_internal",
    "open_in_root",
    "pointed_git_dirs",
    "read_workspace_bytes",
    "read_workspace_text",
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


def read_workspace_text(
    root: Path,
    rel_or_abs: str,
    *,
    max_bytes: int,
    secret_patterns: Sequence[str] = DEFAULT_SECRET_PATH_PATTERNS,
) -> tuple[str, FileRead]:
    """Read a workspace text file for the model: jailed, checked, decoded and redacted.

    Returns the text (secret-looking values masked, line count kept) and a FileRead with the
    whole file's sha256. Raises PathOutsideWorkspace for paths leaving the root and
    UnreadableFile for secret files, directories, FIFOs/sockets/devices, binary files, files
    over `max_bytes` and missing files.
    """
    data, read = read_workspace_bytes(
        root, rel_or_abs, max_bytes=max_bytes, secret_patterns=secret_patterns
    )
    if looks_binary(data):
        raise UnreadableFile(f"{read.path} is a binary file; only text files can be read", "binary")
    text, _ = redact_secrets(decode_text(data))
    return text, read


def current_sha256(
    root: Path, rel_or_abs: str, *, secret_patterns: Sequence[str] = ()
) -> str | None:
    """The file's sha256 now, or None when it is gone, unreadable or refused by the jail."""
    try:
        _, read = read_workspace_bytes(
            root, rel_or_abs, max_bytes=READ_MAX_FILE_BYTES, secret_patterns=secret_patterns
        )
    except (LiveMemoryError, OSError):
        return None
    return read.sha256


def read_workspace_bytes(
    root: Path,
    rel_or_abs: str,
    *,
    max_bytes: int,
    secret_patterns: Sequence[str] = DEFAULT_SECRET_PATH_PATTERNS,
) -> tuple[bytes, FileRead]:
    """The raw bytes of a regular, non-secret workspace file (no binary check, no redaction).

    For callers that must see the real bytes (hashing, searching) and never show them as is.
    Raises like `read_workspace_text`, except for the binary check.
    """
    opened = open_in_root(root, rel_or_abs, secret_patterns=secret_patterns)
    check_regular(opened.fd, opened.rel or rel_or_abs)
    data = _read_fd(opened.fd, opened.rel, max_bytes)
    rel = opened.rel
    return data, FileRead(path=rel, sha256=hashlib.sha256(data).hexdigest(), size=len(data))


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
    if given and (git_internal(real_root, given) or is_secret_path(given, secret_patterns)):
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
    if real and (git_internal(real_root, real) or is_secret_path(real, secret_patterns)):
        os.close(opened.fd)
        raise _refusal(given or real, git=git_internal(real_root, real))
    return opened


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


class ListedFileReader:
    """Reads many files named by the workspace listing (a Grep without rg), still jailed.

    Raises PathOutsideWorkspace and UnreadableFile like the functions above.
    """

    def __init__(self, root: Path, secret_patterns: Sequence[str]) -> None:
        self._root = Path(os.path.realpath(root))
        self._secret_patterns = tuple(secret_patterns)

    def head(self, rel: str, size: int = BINARY_SNIFF_BYTES + 1) -> bytes:
        """The first `size` bytes (enough for `looks_binary`)."""
        fd = self._open(rel)
        try:
            return os.read(fd, size)
        finally:
            os.close(fd)

    def read(self, rel: str, max_bytes: int) -> bytes:
        """The whole file, refused when over `max_bytes`."""
        return _read_fd(self._open(rel), rel, max_bytes)

    def _open(self, rel: str) -> int:
        opened = open_in_root(self._root, rel, secret_patterns=self._secret_patterns)
        check_regular(opened.fd, rel)
        return opened.fd


def _read_fd(fd: int, shown: str, max_bytes: int) -> bytes:
    with os.fdopen(fd, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > max_bytes:
            raise UnreadableFile(_too_large(shown, size, max_bytes), "too_large")
        # Ask for what fstat promised, not for max_bytes: read(n) may allocate n bytes up front.
        data = handle.read(size + 1)
        if len(data) > size:  # grew since fstat: read the rest, up to the cap
            data += handle.read(max_bytes + 1 - len(data))
    if len(data) > max_bytes:
        raise UnreadableFile(_too_large(shown, len(data), max_bytes), "too_large")
    return data


def check_regular(fd: int, shown: str) -> None:
    """Raise UnreadableFile (closing `fd`) unless it is a regular file."""
    try:
        _require_regular(os.fstat(fd).st_mode, shown)
    except BaseException:
        os.close(fd)
        raise


def _require_regular(mode: int, shown: str) -> None:
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        raise UnreadableFile(
            f"{shown} is a directory; use find_paths or Glob to list it", "directory"
        )
    kind = "FIFO" if stat.S_ISFIFO(mode) else "socket" if stat.S_ISSOCK(mode) else "device file"
    raise UnreadableFile(f"{shown} is a {kind}, not a regular file; it cannot be read", "special")


def _too_large(shown: str, size: int, max_bytes: int) -> str:
    return (
        f"{shown} is {size / 1_048_576:.1f} MiB, over the {max_bytes / 1_048_576:.1f} MiB "
        "read limit; Grep searches it (pattern and path) and shows the matching lines"
    )


def _is_within(resolved: str, real_root: str) -> bool:
    if resolved == real_root:
        return True
    prefix = real_root if real_root.endswith(os.sep) else real_root + os.sep
    return resolved.startswith(prefix)
