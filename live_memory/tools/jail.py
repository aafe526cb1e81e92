"""The one path jail, and the only code that opens workspace files.

Every path a model (or a hook payload) names goes through `resolve_in_root`: NUL bytes are
refused, symlinks are resolved first, and the result must stay under the resolved root. Files
are then opened by `read_workspace_text` / `read_workspace_bytes` (one file a model named) or
a `ListedFileReader` (the many files of a search), which refuse anything that is not a regular
file and never block on a FIFO or a device.
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import re
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from live_memory.config.constants import (
    BINARY_SNIFF_BYTES,
    DEFAULT_SECRET_PATH_PATTERNS,
    READ_MAX_FILE_BYTES,
)
from live_memory.errors import LiveMemoryError, PathOutsideWorkspace
from live_memory.hygiene import is_secret_path, looks_binary, redact_secrets
from live_memory.tools.outcome import FileRead
from live_memory.tools.text import decode_text

__all__ = [
    "ListedFileReader",
    "UnreadableFile",
    "UnreadableReason",
    "current_sha256",
    "read_workspace_bytes",
    "read_workspace_text",
    "relative_to_root",
    "resolve_in_root",
]

logger = logging.getLogger(__name__)

UnreadableReason = Literal[
    "missing", "directory", "special", "too_large", "binary", "secret", "unreadable"
]

# O_NONBLOCK: opening a FIFO must not wait for a writer. O_NOFOLLOW: the path was resolved by
# the jail, so a symlink appearing at the last component now means someone swapped it in.
_OPEN_FLAGS = (
    os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
)
# A listing path that needs no resolving: relative, without '', '.' or '..' parts.
_PLAIN_REL = re.compile(r"(?:(?!\.\.?/)[^/\x00]+/)*(?!\.\.?$)[^/\x00]+")


class UnreadableFile(LiveMemoryError):
    """A path inside the workspace that is not a readable text file for the model.

    `reason` says why: missing, directory, special (FIFO, socket, device), too_large, binary,
    secret or unreadable (permissions, symlink loops). The message is written for the model
    and names the path.
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


def _jail(real_root: str, user_path: str) -> str:
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
    candidate = user_path if os.path.isabs(user_path) else os.path.join(real_root, user_path)
    try:
        resolved = os.path.realpath(candidate)
    except (OSError, ValueError) as exc:
        raise PathOutsideWorkspace(f"path {user_path!r} cannot be resolved: {exc}") from None
    if not _is_within(resolved, real_root):
        raise PathOutsideWorkspace(
            f"path {user_path!r} is outside the workspace {real_root}; "
            "use a path relative to the workspace root"
        )
    return resolved


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
    # The root is resolved once here: this runs for every file a fallback Grep searches.
    real_root = os.path.realpath(root)
    resolved = Path(_jail(real_root, rel_or_abs))
    rel = _relative(str(resolved), real_root)
    # The name the caller used counts too: a link called `.env` stays secret wherever it points.
    given = os.path.normpath(rel_or_abs) if rel_or_abs else rel
    if is_secret_path(rel, secret_patterns) or is_secret_path(given, secret_patterns):
        raise UnreadableFile(
            f"{rel or rel_or_abs} looks like a secret file (keys, credentials, .env); "
            "its contents are withheld",
            "secret",
        )
    data = _read_regular(resolved, rel or ".", max_bytes)
    return data, FileRead(path=rel, sha256=hashlib.sha256(data).hexdigest(), size=len(data))


class ListedFileReader:
    """Reads many files named by the workspace listing, cheaply and still jailed.

    `realpath` costs a syscall per path component, per file; a listing's files share a few
    hundred directories. So each directory is resolved once (it must resolve to itself: no
    symlinked directory on the way) and files are opened with O_NOFOLLOW; a file that is
    itself a symlink goes through the full jail. Holds a cache: use one per search, not
    across threads. Raises PathOutsideWorkspace and UnreadableFile like the functions above.
    """

    def __init__(self, root: Path, secret_patterns: Sequence[str]) -> None:
        self._root = os.path.realpath(root)
        self._secret_patterns = tuple(secret_patterns)
        self._plain_dirs: dict[str, bool] = {}

    def head(self, rel: str, size: int = BINARY_SNIFF_BYTES + 1) -> bytes:
        """The first `size` bytes (enough for `looks_binary`)."""
        fd = self._open(rel)
        try:
            # A plain os.read: this runs once per matching file of a search, buffering is waste.
            return os.read(fd, size)
        finally:
            os.close(fd)

    def read(self, rel: str, max_bytes: int) -> bytes:
        """The whole file, refused when over `max_bytes`."""
        return _read_fd(self._open(rel), rel, max_bytes)

    def _open(self, rel: str) -> int:
        if is_secret_path(rel, self._secret_patterns):
            raise UnreadableFile(f"{rel} looks like a secret file; contents withheld", "secret")
        directory = rel.rpartition("/")[0]
        if not _PLAIN_REL.fullmatch(rel) or not self._is_plain_dir(directory):
            return self._open_jailed(rel)
        try:
            fd = os.open(os.path.join(self._root, rel), _OPEN_FLAGS)
        except FileNotFoundError:
            raise UnreadableFile(f"{rel} does not exist", "missing") from None
        except OSError as exc:
            if exc.errno == errno.ELOOP:  # the file itself is a symlink
                return self._open_jailed(rel)
            raise UnreadableFile(f"{rel} cannot be opened: {exc.strerror}", "unreadable") from None
        _check_fd_regular(fd, rel)
        return fd

    def _open_jailed(self, rel: str) -> int:
        resolved = _jail(self._root, rel)
        if is_secret_path(_relative(resolved, self._root), self._secret_patterns):
            raise UnreadableFile(f"{rel} leads to a secret file; contents withheld", "secret")
        return _open_regular(Path(resolved), rel)

    def _is_plain_dir(self, directory: str) -> bool:
        known = self._plain_dirs.get(directory)
        if known is None:
            full = os.path.join(self._root, directory) if directory else self._root
            known = self._plain_dirs[directory] = os.path.realpath(full) == full
        return known


def _read_regular(resolved: Path, shown: str, max_bytes: int) -> bytes:
    return _read_fd(_open_regular(resolved, shown), shown, max_bytes)


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


def _open_regular(resolved: Path, shown: str) -> int:
    """Open for reading and return the descriptor, or refuse anything but a regular file."""
    try:
        before = os.stat(resolved)
    except FileNotFoundError:
        raise UnreadableFile(f"{shown} does not exist", "missing") from None
    except NotADirectoryError:
        raise UnreadableFile(f"{shown} does not exist (a parent is a file)", "missing") from None
    except OSError as exc:  # permissions, symlink loops
        raise UnreadableFile(f"{shown} cannot be read: {exc.strerror}", "unreadable") from None
    _require_regular(before.st_mode, shown)
    try:
        fd = os.open(resolved, _OPEN_FLAGS)
    except FileNotFoundError:
        raise UnreadableFile(f"{shown} does not exist", "missing") from None
    except OSError as exc:
        # ELOOP: a symlink was swapped in after the jail resolved the path; ENXIO: a socket.
        reason: UnreadableReason = (
            "special" if exc.errno in (errno.ELOOP, errno.ENXIO) else "unreadable"
        )
        raise UnreadableFile(f"{shown} cannot be opened: {exc.strerror}", reason) from None
    _check_fd_regular(fd, shown)
    return fd


def _check_fd_regular(fd: int, shown: str) -> None:
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
        "read limit; use Grep to search it instead"
    )


def _is_within(resolved: str, real_root: str) -> bool:
    if resolved == real_root:
        return True
    prefix = real_root if real_root.endswith(os.sep) else real_root + os.sep
    return resolved.startswith(prefix)
