"""Parsing `/notify` bodies: the canonical batch, or a raw Claude Code hook payload.

Raises InputError (→ 422) naming the problem, PayloadTooLarge (→ 413) for oversize batches.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from live_memory.actors import EventKind
from live_memory.config import constants as C
from live_memory.errors import InputError, PayloadTooLarge
from live_memory.workspace import FileEvent

__all__ = ["HOOK_TOOLS", "parse_notify"]

_CANONICAL_KINDS: frozenset[str] = frozenset({"read", "write", "change", "add", "unlink"})
_FILE_CHANGED_EVENTS: frozenset[str] = frozenset({"add", "change", "unlink"})
HOOK_TOOLS: frozenset[str] = frozenset({"Read", "Write", "Edit", "MultiEdit", "NotebookEdit"})


def _member(value: object, allowed: frozenset[str]) -> bool:
    """`value in allowed` for any JSON value (a list or object is unhashable, not an error)."""
    return isinstance(value, str) and value in allowed


def _text(value: object, field: str) -> str:
    if not isinstance(value, str) or not value:
        raise InputError(f"{field} must be a non-empty string")
    return value


def _content(value: object, field: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InputError(f"{field} must be a string when present")
    return value


def parse_notify(
    body: object, *, max_events: int = C.MAX_NOTIFY_EVENTS
) -> tuple[str, list[FileEvent]]:
    """(cwd, events) from a canonical batch or a raw hook payload."""
    if not isinstance(body, Mapping):
        raise InputError("body must be a JSON object")
    payload = cast(Mapping[str, Any], body)
    if "hook_event_name" in payload:
        return _text(payload.get("cwd"), "cwd"), _from_hook(payload)
    cwd = _text(payload.get("cwd"), "cwd")
    events = payload.get("events")
    if not isinstance(events, list):
        raise InputError("events must be a list of {path, kind, content?}")
    if len(events) > max_events:
        raise PayloadTooLarge(
            f"events: {len(events)} in one batch; LIVE_MEMORY_MAX_NOTIFY_EVENTS is {max_events}"
        )
    parsed = []
    for i, item in enumerate(events):
        if not isinstance(item, Mapping):
            raise InputError(f"events[{i}] must be an object")
        kind = item.get("kind")
        if not _member(kind, _CANONICAL_KINDS):
            raise InputError(
                f"events[{i}].kind must be one of {sorted(_CANONICAL_KINDS)}, got {kind!r}"
            )
        parsed.append(
            FileEvent(
                _text(item.get("path"), f"events[{i}].path"),
                cast(EventKind, kind),
                _content(item.get("content"), f"events[{i}].content"),
            )
        )
    return cwd, parsed


def _from_hook(payload: Mapping[str, Any]) -> list[FileEvent]:
    name = payload.get("hook_event_name")
    if name == "FileChanged":
        event = payload.get("event")
        if not _member(event, _FILE_CHANGED_EVENTS):
            raise InputError(f"FileChanged event must be add, change or unlink, got {event!r}")
        return [FileEvent(_text(payload.get("file_path"), "file_path"), cast(EventKind, event))]
    if name != "PostToolUse":
        raise InputError(f"hook_event_name {name!r} is not a file notification")
    tool = payload.get("tool_name")
    if not _member(tool, HOOK_TOOLS):
        return []  # other tools carry no file knowledge; accepted and ignored
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, Mapping):
        raise InputError("tool_input must be an object")
    path = _text(
        tool_input.get("file_path") or tool_input.get("notebook_path"), "tool_input.file_path"
    )
    content = _content(payload.get("content"), "content")
    if tool == "Read":
        content = content if content is not None else _full_read(payload.get("tool_response"))
        return [FileEvent(path, "read", content)]
    if content is None and tool == "Write":
        content = _content(tool_input.get("content"), "tool_input.content")
    return [FileEvent(path, "write" if content is not None else "modified", content)]


def _full_read(response: object) -> str | None:
    """The Read tool's content, only when it covers the whole file (no offset/limit)."""
    if not isinstance(response, Mapping):
        return None
    file = response.get("file")
    if not isinstance(file, Mapping) or not isinstance(file.get("content"), str):
        return None
    total, lines, start = file.get("totalLines"), file.get("numLines"), file.get("startLine", 1)
    if start != 1 or not isinstance(total, int) or not isinstance(lines, int) or lines < total:
        return None
    return cast(str, file["content"])
