"""The agents' configuration files, edited without clobbering: one writer per format (JSON,
TOML, a delimited markdown block, a whole file of ours), each a pure function from the file's
text (None: no file) to its new text (None: no file), plus the refusal of a malformed one.

`connect` sets our entry and keeps everything else; `disconnect` removes exactly our entry.
Neither writes a file it cannot parse: MalformedConfig names the file and why, and the file
is left as it is.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable
from typing import Any

import tomlkit
from tomlkit.exceptions import TOMLKitError

from live_memory.cli.outcome import CommandFailed, ExitCode

__all__ = [
    "BLOCK_BEGIN",
    "BLOCK_END",
    "MalformedConfig",
    "edit_block",
    "edit_hooks",
    "edit_json",
    "edit_toml",
]

BLOCK_BEGIN = "<!-- live-memory:begin (written by `live-memory connect`; removed by disconnect) -->"
BLOCK_END = "<!-- live-memory:end -->"
_BLOCK = re.compile(
    r"\n?"
    + re.escape(BLOCK_BEGIN.split(" ", 1)[0])
    + r"[^\n]*\n.*?"
    + re.escape(BLOCK_END)
    + r"\n?",
    re.DOTALL,
)
Ours = Callable[[object], bool]


class MalformedConfig(CommandFailed):
    """An existing file `connect` must edit is not what its format says: it is left as is."""

    def __init__(self, path: str, why: str) -> None:
        super().__init__(
            f"{path} is not valid ({why}); it was left untouched: fix it, or add live-memory "
            "by hand (docs/AGENTS.md)",
            ExitCode.USAGE,
        )


def _load_json(text: str | None, path: str) -> dict[str, Any]:
    if text is None or not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:  # JSONC (comments, trailing commas) included: never guessed at
        raise MalformedConfig(path, f"not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise MalformedConfig(path, "its top level is not a JSON object")
    return data


def _dump_json(data: dict[str, Any]) -> str | None:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n" if data else None


def _parent(data: dict[str, Any], keys: tuple[str, ...], path: str) -> dict[str, Any]:
    """The object holding `keys[-1]`, created along the way; MalformedConfig when a step is
    something else (a user's `"mcpServers": []`)."""
    node = data
    for key in keys[:-1]:
        child = node.setdefault(key, {})
        if not isinstance(child, dict):
            raise MalformedConfig(path, f"{'.'.join(keys[:-1])} is not an object")
        node = child
    return node


def edit_json(
    text: str | None, path: str, keys: tuple[str, ...], value: object | None
) -> str | None:
    """`text` with `keys` set to `value` (None: removed, and the objects it leaves empty)."""
    data = _load_json(text, path)
    if value is not None:
        _parent(data, keys, path)[keys[-1]] = value
        return _dump_json(data)
    trail = [data]
    for key in keys[:-1]:
        child = trail[-1].get(key)
        if not isinstance(child, dict):
            return text if data else None
        trail.append(child)
    trail[-1].pop(keys[-1], None)
    for depth in range(len(trail) - 1, 0, -1):
        if not trail[depth]:
            trail[depth - 1].pop(keys[depth - 1])
    return _dump_json(data)


def edit_hooks(
    text: str | None,
    path: str,
    entries: dict[str, object] | None,
    ours: Ours,
    top: dict[str, object],
) -> str | None:
    """The hooks file with our entry per event replaced by `entries` (None: only removed).
    Others' entries under the same events stay, in their order; ours come last."""
    data = _load_json(text, path)
    hooks = data.get("hooks", {})
    if not isinstance(hooks, dict):
        raise MalformedConfig(path, "hooks is not an object")
    for event in list(hooks):
        listed = hooks[event]
        if not isinstance(listed, list):
            raise MalformedConfig(path, f"hooks.{event} is not a list")
        kept = [entry for entry in listed if not ours(entry)]
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    for event, entry in (entries or {}).items():
        hooks.setdefault(event, []).append(entry)
    if hooks:
        data["hooks"] = hooks
        data = {k: v for k, v in top.items() if k not in data} | data  # `version` first
    else:
        data.pop("hooks", None)
        if entries is None:
            for key, value in top.items():
                if data.get(key) == value:
                    data.pop(key)
    return _dump_json(data)


def edit_toml(
    text: str | None,
    path: str,
    keys: tuple[str, ...],
    value: dict[str, object] | None,
    flags: dict[tuple[str, str], object] | None = None,
) -> str | None:
    """`text` with table `keys` set to `value` (None: removed) and `flags` ((table, key) ->
    value) set where absent, comments and layout kept (tomlkit)."""
    source = text or ""
    try:
        tomllib.loads(source)  # the reference parser decides what is valid
        doc = tomlkit.parse(source)
    except (tomllib.TOMLDecodeError, TOMLKitError) as exc:
        raise MalformedConfig(path, f"not TOML: {exc}") from None
    parent: Any = doc
    for key in keys[:-1]:
        if key not in parent:
            if value is None:
                return text
            parent[key] = tomlkit.table(is_super_table=True)
        parent = parent[key]
        if not isinstance(parent, dict):
            raise MalformedConfig(path, f"{key} is not a table")
    if value is None:
        parent.pop(keys[-1], None)
        if not parent and keys[:-1]:
            doc.pop(keys[0], None)
    else:
        table = tomlkit.table()
        table.update(value)
        parent[keys[-1]] = table
        for (section, key), flag in (flags or {}).items():
            holder = doc.setdefault(section, tomlkit.table())
            if not isinstance(holder, dict):
                raise MalformedConfig(path, f"{section} is not a table")
            holder.setdefault(key, flag)
    rendered = tomlkit.dumps(doc)
    return rendered if rendered.strip() else None


def edit_block(text: str | None, body: str | None) -> str | None:
    """Markdown `text` with our delimited block set to `body` (None: the block removed)."""
    current = text or ""
    block = f"{BLOCK_BEGIN}\n{body.rstrip()}\n{BLOCK_END}\n" if body is not None else ""
    match = _BLOCK.search(current)
    if match is not None:
        lead = "\n" if block and match.group(0).startswith("\n") else ""
        current = current[: match.start()] + lead + block + current[match.end() :]
    elif block:
        current = current + ("\n" if current and not current.endswith("\n") else "")
        current += ("\n" if current else "") + block
    return current if current.strip() else None
