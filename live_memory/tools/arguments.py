"""Reading a tool call's arguments leniently, and explaining clearly when they are wrong.

Cheap models send `"10"` for 10, `"true"` for true, and old argument names (`regex`,
`file_pattern`, `max_results`); those are accepted. Anything else becomes a BadToolArguments
whose message tells the model what to send instead.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence

from live_memory.errors import InputError
from live_memory.path_glob import PathGlob, compile_glob

__all__ = ["BadToolArguments", "ToolArgs", "tool_glob"]

logger = logging.getLogger(__name__)

_TRUE = frozenset({"true", "yes", "1", "on"})
_FALSE = frozenset({"false", "no", "0", "off"})


class BadToolArguments(InputError):
    """A tool call's arguments are missing or of the wrong type; the message says which."""


class ToolArgs:
    """One tool call's arguments, with typed accessors that accept legacy aliases."""

    __slots__ = ("_raw", "_tool")

    def __init__(self, tool: str, raw: object) -> None:
        if raw is None:
            raw = {}
        if not isinstance(raw, Mapping):
            raise BadToolArguments(
                f"{tool}: arguments must be a JSON object, got {type(raw).__name__}"
            )
        self._tool = tool
        self._raw: Mapping[object, object] = raw

    def _lookup(self, name: str, aliases: Sequence[str]) -> tuple[str, object] | None:
        for key in (name, *aliases):
            value = self._raw.get(key)
            if value is not None:
                return key, value
        return None

    def text(self, name: str, *aliases: str, required: bool = False) -> str | None:
        """A string argument; numbers are accepted and turned into text."""
        found = self._lookup(name, aliases)
        if found is None:
            if required:
                raise BadToolArguments(f"{self._tool}: missing required argument '{name}'")
            return None
        key, value = found
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise BadToolArguments(
                f"{self._tool}: argument '{key}' must be a string, got {type(value).__name__}"
            )
        text = value if isinstance(value, str) else str(value)
        if required and not text:
            raise BadToolArguments(f"{self._tool}: argument '{name}' must not be empty")
        return text

    def required_text(self, name: str, *aliases: str) -> str:
        """A string argument that must be present and non-empty."""
        text = self.text(name, *aliases, required=True)
        if text is None:  # pragma: no cover - text() raised already
            raise BadToolArguments(f"{self._tool}: missing required argument '{name}'")
        return text

    def integer(self, name: str, *aliases: str, default: int, minimum: int, maximum: int) -> int:
        """An integer argument clamped to [minimum, maximum]; '10' and 10.0 are accepted."""
        found = self._lookup(name, aliases)
        if found is None:
            return default
        key, value = found
        number: int | None = None
        if isinstance(value, int) and not isinstance(value, bool):
            number = value
        elif isinstance(value, float) and math.isfinite(value) and value.is_integer():
            number = int(value)
        elif isinstance(value, str):
            try:
                number = int(value.strip())
            except ValueError:
                number = None
        if number is None:
            raise BadToolArguments(
                f"{self._tool}: argument '{key}' must be an integer, got {value!r:.60}"
            )
        return min(max(number, minimum), maximum)

    def flag(self, name: str, *aliases: str, default: bool) -> bool:
        """A boolean argument; 'true'/'false', 'yes'/'no' and 1/0 are accepted."""
        found = self._lookup(name, aliases)
        if found is None:
            return default
        key, value = found
        if isinstance(value, bool):
            return value
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
            return value.strip().lower() in _TRUE
        raise BadToolArguments(
            f"{self._tool}: argument '{key}' must be true or false, got {value!r:.60}"
        )

    def choice(self, name: str, *aliases: str, choices: Sequence[str], default: str) -> str:
        """One of `choices` (case-insensitive)."""
        value = self.text(name, *aliases)
        if value is None or not value.strip():
            return default
        lowered = value.strip().lower()
        for option in choices:
            if option.lower() == lowered:
                return option
        raise BadToolArguments(
            f"{self._tool}: argument '{name}' must be one of {', '.join(choices)}; "
            f"got {value!r:.60}"
        )


def tool_glob(tool: str, pattern: str, *, ignore_case: bool = False) -> PathGlob:
    """`compile_glob` for a tool's argument: what it refuses is the tool's BadToolArguments."""
    try:
        return compile_glob(pattern, ignore_case=ignore_case)
    except ValueError as exc:
        raise BadToolArguments(f"{tool}: {exc}") from None
