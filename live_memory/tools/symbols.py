"""find_symbol and outline: the structural index as tools (behind the same jail and scope).

The index itself lives in `live_memory.index`; the toolbox only knows this protocol, so the
tools package does not depend on it. Lines come out as `path:line [kind] name: signature`
(the text is redacted here as a whole); secret files and files
outside the monitoring scope are never shown, whatever the index holds.
"""

from __future__ import annotations

from typing import Protocol

from live_memory.config.constants import FIND_SYMBOL_DEFAULT_LIMIT, OUTLINE_MAX_ENTRIES
from live_memory.hygiene import redact_secrets
from live_memory.tools.arguments import BadToolArguments, ToolArgs
from live_memory.tools.jail import relative_to_root, resolve_in_root
from live_memory.tools.outcome import ToolOutcome
from live_memory.tools.scope import Scope

__all__ = ["SYMBOL_KINDS", "SymbolSource", "run_find_symbol", "run_outline"]

SYMBOL_KINDS = (
    "function",
    "method",
    "class",
    "struct",
    "interface",
    "trait",
    "enum",
    "type",
    "module",
    "macro",
)


class SymbolSource(Protocol):
    def symbol_lines(self, name: str, kind: str | None, limit: int) -> list[tuple[str, str]]:
        """(path, line text) of the definitions named `name`."""
        ...

    def outline_lines(self, rel: str) -> list[str] | None:
        """The file's outline lines, or None when the file is not indexed."""
        ...

    def status(self) -> str:
        """One line on how complete the index is (for empty results)."""
        ...


_OFF = "the symbol index is not available for this workspace; use Grep instead"


def run_find_symbol(scope: Scope, args: ToolArgs, *, symbols: SymbolSource | None) -> ToolOutcome:
    """find_symbol{name, kind?, limit?}."""
    name = args.required_text("name", "symbol", "query").strip()
    if not name or len(name) > 200:
        raise BadToolArguments("find_symbol: 'name' must be a symbol name (1-200 characters)")
    kind = args.choice("kind", "type", choices=("any", *SYMBOL_KINDS), default="any")
    limit = args.integer("limit", default=FIND_SYMBOL_DEFAULT_LIMIT, minimum=1, maximum=200)
    if symbols is None:
        return ToolOutcome(text=f"find_symbol: {_OFF}", is_error=True)
    found = symbols.symbol_lines(name, None if kind == "any" else kind, limit * 2)
    hidden = scope.invisible_paths({path for path, _ in found})
    lines = [line for path, line in found if path not in hidden][:limit]
    if not lines:
        return ToolOutcome(
            text=f"No definition named {name!r} in the index ({symbols.status()}). "
            "Try Grep for the name, or a different spelling."
        )
    return ToolOutcome(text=redact_secrets("\n".join(lines))[0])


def run_outline(scope: Scope, args: ToolArgs, *, symbols: SymbolSource | None) -> ToolOutcome:
    """outline{path}: a file's definitions (line, kind, name, signature) and imports."""
    given = args.required_text("path", "file_path", "file").strip()
    resolved = resolve_in_root(scope.root, given)
    rel = relative_to_root(scope.root, resolved)
    scope.require_visible(rel, given=given)
    if symbols is None:
        return ToolOutcome(text=f"outline: {_OFF}", is_error=True)
    lines = symbols.outline_lines(rel)
    if lines is None:
        return ToolOutcome(
            text=f"outline: {rel} is not in the symbol index (not a source file in a supported "
            f"language, or not indexed yet: {symbols.status()}). Use Read instead.",
            is_error=True,
        )
    if not lines:
        return ToolOutcome(text=f"{rel}: no definitions found")
    shown = lines[:OUTLINE_MAX_ENTRIES]
    if len(lines) > len(shown):
        shown.append(f"[{len(lines) - len(shown)} more entries; Read the file for the rest]")
    return ToolOutcome(text=redact_secrets("\n".join(shown))[0])
