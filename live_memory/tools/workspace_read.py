"""Reading workspace files through the jail: for the model (checked, decoded, redacted), as
raw bytes (hashing, searching), and many listed files at once (Grep without rg). Every open
is `jail.open_in_root`; the size cap holds even for a file that grows while it is read.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

from live_memory.config.constants import (
    BINARY_SNIFF_BYTES,
    DEFAULT_SECRET_PATH_PATTERNS,
    READ_MAX_FILE_BYTES,
)
from live_memory.errors import LiveMemoryError
from live_memory.hygiene import looks_binary, redact_secrets
from live_memory.tools.jail import UnreadableFile, check_regular, open_in_root
from live_memory.tools.outcome import FileRead
from live_memory.tools.text import decode_text

__all__ = ["ListedFileReader", "current_sha256", "read_workspace_bytes", "read_workspace_text"]


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


def _too_large(shown: str, size: int, max_bytes: int) -> str:
    return (
        f"{shown} is {size / 1_048_576:.1f} MiB, over the {max_bytes / 1_048_576:.1f} MiB "
        "read limit; Grep searches it (pattern and path) and shows the matching lines"
    )
