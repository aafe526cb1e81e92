"""What running one exploration tool produces."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FileRead", "Span", "ToolOutcome"]


@dataclass(frozen=True, slots=True)
class FileRead:
    """A workspace file the tool read (and whose bytes reached the model)."""

    path: str
    """Workspace-relative, POSIX separators."""
    sha256: str
    """Hex digest of the whole file's bytes at the time of reading."""
    size: int


@dataclass(frozen=True, slots=True)
class Span:
    """Lines of a workspace file a tool showed the model (an answer's possible source)."""

    path: str
    start: int
    """0: the file was only named (Grep's list of matching files)."""
    end: int


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """The tool result the model sees, plus what the window should record."""

    text: str
    is_error: bool = False
    reads: tuple[FileRead, ...] = ()
    spans: tuple[Span, ...] = ()
    """The lines it showed: a Read's range, Grep's matching lines."""
