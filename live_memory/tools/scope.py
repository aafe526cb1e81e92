"""What the tools may see: the jailed root, minus secret files, within the monitoring scope."""

from __future__ import annotations

import fnmatch
import logging
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from live_memory.errors import PathOutsideWorkspace
from live_memory.hygiene import is_secret_path
from live_memory.tools.jail import UnreadableFile, relative_to_root, resolve_in_root
from live_memory.tools.listing import list_workspace_files

__all__ = ["Scope"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Scope:
    """The immutable view one Toolbox gives the model; safe to share between threads."""

    root: Path
    """Already resolved (`os.path.realpath`)."""
    secret_patterns: tuple[str, ...]
    file_globs: tuple[str, ...]
    """Monitoring scope: fnmatch patterns (`*` crosses `/`); empty means everything."""

    def visible(self, rel: str) -> bool:
        """May the model see this workspace-relative file at all?"""
        return not is_secret_path(rel, self.secret_patterns) and self.monitored(rel)

    def monitored(self, rel: str) -> bool:
        """Is `rel` inside the monitoring scope (`file_globs`)?"""
        return not self.file_globs or any(fnmatch.fnmatchcase(rel, g) for g in self.file_globs)

    def require_visible(self, rel: str, *, given: str | None = None) -> None:
        """Raise UnreadableFile when `rel` is secret or outside the monitoring scope.

        `given` is the name the model used; a link called `.env` is secret wherever it points.
        """
        names = (rel,) if not given else (rel, os.path.normpath(given))
        if any(is_secret_path(name, self.secret_patterns) for name in names):
            raise UnreadableFile(
                f"{given or rel} looks like a secret file (keys, credentials, .env); "
                "its contents are withheld",
                "secret",
            )
        if not self.monitored(rel):
            raise UnreadableFile(
                f"{rel} is outside this workspace's monitored files ({', '.join(self.file_globs)})",
                "missing",
            )

    def locate(self, user_path: str | None) -> tuple[Path, str]:
        """Jail a tool's `path` argument: (resolved path, workspace-relative form; '' = root).

        Accepts the root's own absolute path and '.'. Raises PathOutsideWorkspace.
        """
        if user_path is None or user_path.strip() in ("", ".", "./"):
            return self.root, ""
        resolved = resolve_in_root(self.root, user_path.strip())
        return resolved, relative_to_root(self.root, resolved)

    def files_under(self, rel_dir: str) -> list[str]:
        """Visible workspace files below `rel_dir` ('' = all), sorted, workspace-relative."""
        prefix = f"{rel_dir}/" if rel_dir else ""
        return [
            path
            for path in list_workspace_files(self.root)
            if path.startswith(prefix) and self.visible(path)
        ]

    def regular_size(self, rel: str) -> int | None:
        """Size of `rel` if it is (or links, inside the root, to) a visible regular file.

        Tools that hand paths to another program (rg) call this first, so it never follows
        a link out of the workspace, to a secret, or into a FIFO that would block it.
        """
        try:
            info = os.lstat(os.path.join(self.root, rel))
            if stat.S_ISLNK(info.st_mode):
                target = resolve_in_root(self.root, rel)
                if not self.visible(relative_to_root(self.root, target)):
                    return None
                info = os.stat(target)
        except (OSError, PathOutsideWorkspace):
            return None
        return info.st_size if stat.S_ISREG(info.st_mode) else None
