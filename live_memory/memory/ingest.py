"""Applying file-change notifications to a window (design §Data Flow 3a-c).

content-bearing read/write → observe (held content, marked current);
change/add → stale, unlink → deleted, for files the window knows (cited facts demoted);
edits without content → the recently-modified hint of the next question.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

from live_memory.config import constants as C
from live_memory.hygiene import is_secret_path, looks_binary, redact_secrets
from live_memory.memory.window import Window
from live_memory.path_glob import glob_set
from live_memory.tools import current_sha256

__all__ = ["Ingestor", "held_bytes_cap", "in_scope"]

_CONTENT_KINDS = ("read", "write")


def held_bytes_cap(max_held_bytes: int, max_context_tokens: int, compaction_floor: float) -> int:
    """The observed bytes one workspace may hold: the setting, and never more than
    HELD_BYTES_SHARE_OF_FLOOR of the compaction floor (held bytes are sent with every question,
    so a cap above the floor would make every compaction shed them again)."""
    floor_chars = max_context_tokens * compaction_floor * C.CHARS_PER_TOKEN
    return max(0, min(max_held_bytes, int(floor_chars * C.HELD_BYTES_SHARE_OF_FLOOR)))


def in_scope(rel_path: str, globs: Sequence[str]) -> bool:
    """Does `rel_path` match one of `globs` (see `live_memory.path_glob`)? None = everything."""
    return not globs or glob_set(tuple(globs)).matches(rel_path)


class Ingestor:
    """Stateless apart from the echo table; owned by one workspace actor."""

    def __init__(
        self,
        root: Path,
        *,
        file_globs: Sequence[str] = (),
        passive_ingestion: bool = True,
        secret_patterns: Sequence[str] = C.DEFAULT_SECRET_PATH_PATTERNS,
        max_file_bytes: int = C.PASSIVE_MAX_FILE_BYTES,
        max_held_bytes: int | None = None,
    ) -> None:
        """`max_held_bytes`: the per-workspace cap on observed content held (see
        `held_bytes_cap`); past it the least recently used content is shed at once, without
        a model call. None holds without a cap."""
        self.root = root
        self._root_str = str(root)
        self.file_globs = tuple(file_globs)
        self.passive = passive_ingestion
        self.secret_patterns = tuple(secret_patterns)
        self.max_file_bytes = max_file_bytes
        self.max_held_bytes = max_held_bytes

    def relative(self, path: str) -> str | None:
        """Workspace-relative POSIX path, or None when it lies outside (or is unusable)."""
        if not path or "\0" in path:
            return None
        if path.startswith("/"):
            if not self._inside(path):
                # The hook may name the root through a symlink (macOS /tmp -> /private/tmp).
                path = os.path.realpath(path)
                if not self._inside(path):
                    return None
            path = path[len(self._root_str) + 1 :]
        parts = [p for p in path.split("/") if p not in ("", ".")]
        if not parts or ".." in parts or ".git" in parts:  # any repository's internals
            return None
        return "/".join(parts)

    def _inside(self, path: str) -> bool:
        return path == self._root_str or path.startswith(self._root_str + "/")

    def apply(self, window: Window, path: str, kind: str, content: str | None) -> bool:
        """Apply one event; True when it was accepted (changed or confirmed knowledge)."""
        rel = self.relative(path)
        if rel is None or not in_scope(rel, self.file_globs):
            return False
        if kind in _CONTENT_KINDS:
            return self._content_event(window, rel, kind, content)
        if kind in ("change", "add"):
            known = window.files.get(rel)
            # Files the window never read carry no stale knowledge; and a "change" whose bytes
            # equal what the window holds (the echo of a teed write, a commit, a touch) is
            # no change at all.
            if known is None:
                # Not held (evicted by a compaction, say), but facts may still cite it.
                return window.demote_cited(rel, lambda: current_sha256(self.root, rel))
            if known.state != "deleted" and self._unchanged_on_disk(rel, known.sha256):
                return False
            return window.mark_stale(rel)
        if kind == "unlink":
            return window.mark_deleted(rel) or window.demote_cited(rel, lambda: None)
        if kind == "modified":
            return self._changed_without_content(window, rel)
        return False

    def _content_event(self, window: Window, rel: str, kind: str, content: str | None) -> bool:
        usable = (
            content is not None
            and self.passive
            and not is_secret_path(rel, self.secret_patterns)
            and len(content.encode("utf-8", "surrogatepass")) <= self.max_file_bytes
            and not looks_binary(content[: C.BINARY_SNIFF_BYTES].encode("utf-8", "replace"))
        )
        if not usable or content is None:
            # No usable bytes: a write still tells us the file moved on.
            return kind == "write" and self._changed_without_content(window, rel)
        raw = content.encode("utf-8", "replace")
        digest = hashlib.sha256(raw).hexdigest()
        # Bytes already held (an agent re-reading a file, hooks re-sending it) were redacted
        # when first held, and observe only marks them used: not redacted again.
        clean = window.held_content(rel, digest)
        if clean is None:
            clean, _ = redact_secrets(content)
        window.observe(rel, clean, digest, len(raw), held_cap=self.max_held_bytes)
        return True

    @staticmethod
    def _changed_without_content(window: Window, rel: str) -> bool:
        """An edit whose new bytes we lack: held bytes are outdated, so they must not stay
        "current" in the window; the next question is also hinted that the file moved on."""
        window.mark_stale(rel)
        return window.note_modified(rel) or rel in window.files

    def _unchanged_on_disk(self, rel: str, sha256: str) -> bool:
        return current_sha256(self.root, rel) == sha256
