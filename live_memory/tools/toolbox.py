"""Dispatching the model's tool calls: every failure becomes a result the model can read."""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from live_memory.config.constants import (
    DEFAULT_SECRET_PATH_PATTERNS,
    READ_MAX_FILE_BYTES,
    TOOL_OUTPUT_MAX_CHARS,
)
from live_memory.errors import LiveMemoryError
from live_memory.providers import ToolSpec
from live_memory.tools.arguments import ToolArgs
from live_memory.tools.find_paths import run_find_paths
from live_memory.tools.git_tools import run_get_changed_files, run_git_search
from live_memory.tools.glob import run_glob
from live_memory.tools.grep import GrepEngine, run_grep
from live_memory.tools.grep_fallback import python_numbers, python_search
from live_memory.tools.outcome import ToolOutcome
from live_memory.tools.read import run_read
from live_memory.tools.ripgrep import find_ripgrep, rg_numbers, rg_search
from live_memory.tools.schema import TOOL_NAMES, TOOL_SPECS
from live_memory.tools.scope import Scope
from live_memory.tools.symbols import SymbolSource, run_find_symbol, run_outline
from live_memory.tools.workspace_read import read_workspace_bytes

__all__ = ["Toolbox"]

logger = logging.getLogger(__name__)

_Handler = Callable[[Scope, ToolArgs], ToolOutcome]


_PLAIN: dict[str, _Handler] = {
    "Read": run_read,
    "Glob": run_glob,
    "find_paths": run_find_paths,
    "get_changed_files": run_get_changed_files,
    "git_search": run_git_search,
}
_BOUND = ("Grep", "find_symbol", "outline")
"""Tools bound to the toolbox's ripgrep binary or symbol index (`Toolbox._bind`)."""


class Toolbox:
    """The read-only exploration tools for one workspace root.

    Holds immutable configuration plus the ripgrep engine's per-root memory (safe to share),
    so one instance may serve several threads at once.
    """

    def __init__(
        self,
        root: Path,
        *,
        secret_patterns: Sequence[str] = DEFAULT_SECRET_PATH_PATTERNS,
        file_globs: Sequence[str] = (),
        max_output_chars: int = TOOL_OUTPUT_MAX_CHARS,
        use_ripgrep: bool = True,
        symbols: SymbolSource | None = None,
        vendored: bool = False,
    ) -> None:
        """`use_ripgrep=False` forces the pure-Python Grep (tests, machines without rg);
        `symbols` is the workspace's structural index (find_symbol, outline); `vendored`
        lists vendored directories too (`live_memory.vendored`)."""
        real = os.path.realpath(root)
        self._scope = Scope(
            root=root if str(root) == real else Path(real),  # the workspace's own Path object
            secret_patterns=tuple(secret_patterns),
            file_globs=tuple(file_globs),
            vendored=vendored,
        )
        self._max_output_chars = max_output_chars
        binary = find_ripgrep() if use_ripgrep else None
        self._rg = binary
        self._grep_engine = "ripgrep" if binary else "python"
        self._symbols = symbols
        # No table of bound handlers per instance: every active workspace holds a toolbox, and
        # most never run a tool before they are passivated (`_bind` makes one per call).

    @property
    def root(self) -> Path:
        return self._scope.root

    @property
    def grep_engine(self) -> str:
        """'ripgrep' or 'python': which Grep implementation this toolbox uses."""
        return self._grep_engine

    def line_count(self, path: str) -> tuple[str, int] | None:
        """(workspace-relative path, lines) of a file the model could Read, through the jail;
        None when it is missing, refused (outside, secret, out of scope) or unreadable."""
        try:
            data, read = read_workspace_bytes(
                self._scope.root,
                path,
                max_bytes=READ_MAX_FILE_BYTES,
                secret_patterns=self._scope.secret_patterns,
            )
            self._scope.require_visible(read.path, given=path)
        except (LiveMemoryError, OSError):
            return None
        return read.path, data.count(b"\n") + (not data.endswith(b"\n") and bool(data))

    def defines(self, name: str) -> bool:
        """Whether the structural index holds a definition named `name` (blocking: SQLite;
        False without an index)."""
        return self._symbols is not None and bool(self._symbols.symbol_lines(name, None, 1))

    @staticmethod
    def specs() -> tuple[ToolSpec, ...]:
        """The tool definitions; identical on every call, so the prompt cache holds."""
        return TOOL_SPECS

    def run(self, name: str, arguments: Mapping[str, object]) -> ToolOutcome:
        """Run one tool call. Never raises: bad input becomes an `is_error` outcome."""
        handler = self._handler(name)
        if handler is None:
            return ToolOutcome(
                text=f"Unknown tool {name!r}. Available tools: {', '.join(TOOL_NAMES)}.",
                is_error=True,
            )
        tool = next(n for n in TOOL_NAMES if n.lower() == str(name).lower())
        try:
            outcome = handler(self._scope, ToolArgs(tool, arguments))
        except LiveMemoryError as exc:  # jail refusals, unreadable files, bad arguments, no git
            outcome = ToolOutcome(text=_prefixed(tool, str(exc)), is_error=True)
        except OSError as exc:  # permissions, vanished files, timeouts
            logger.info("%s failed on %s: %s", tool, self._scope.root, exc)
            outcome = ToolOutcome(text=f"{tool} failed: {exc.strerror or exc}", is_error=True)
        except Exception:
            # The agent loop must never die on a tool: this is the tools' top level.
            logger.exception("%s crashed on arguments %r", tool, arguments)
            outcome = ToolOutcome(
                text=f"{tool} failed with an internal error; try different arguments.",
                is_error=True,
            )
        return self._capped(outcome)

    def _handler(self, name: object) -> _Handler | None:
        if not isinstance(name, str):
            return None
        if name not in _PLAIN and name not in _BOUND:
            # Cheap models sometimes lower-case the name ("read", "grep").
            name = next((k for k in (*_PLAIN, *_BOUND) if k.lower() == name.lower()), "")
        if name in _PLAIN:
            return _PLAIN[name]
        return self._bind(name) if name in _BOUND else None

    def _bind(self, name: str) -> _Handler:
        if name == "Grep":
            rg = self._rg
            engine = GrepEngine(python_search, python_numbers)
            if rg:
                engine = GrepEngine(
                    functools.partial(rg_search, rg), functools.partial(rg_numbers, rg)
                )
            return functools.partial(run_grep, engine=engine)
        run = run_find_symbol if name == "find_symbol" else run_outline
        return functools.partial(run, symbols=self._symbols)

    def _capped(self, outcome: ToolOutcome) -> ToolOutcome:
        text = outcome.text
        limit = self._max_output_chars
        if len(text) <= limit:
            return outcome
        notice = (
            f"\n[output truncated: showing {{shown}} of {len(text)} characters; "
            "narrow the request (offset/limit, path, glob, head_limit)]"
        )
        room = max(limit - len(notice.format(shown=limit)), 0)
        cut = text.rfind("\n", 0, room)
        cut = cut if cut > room // 2 else room
        capped = text[:cut] + notice.format(shown=cut)
        return ToolOutcome(text=capped[:limit], is_error=outcome.is_error, reads=outcome.reads)


def _prefixed(tool: str, message: str) -> str:
    return message if message.startswith(f"{tool}:") else f"{tool}: {message}"
