"""The read-only exploration tools the model gets, all behind one path jail.

`Toolbox` runs the model's tool calls; `resolve_in_root` is the jail, and
`read_workspace_text` (shown to the model: redacted) / `read_workspace_bytes` (raw, e.g. for
hashing) are the only ways to open a workspace file. `list_workspace_files` and
`build_directory_tree` describe the workspace for the stable prompt prefix.
"""

from __future__ import annotations

from live_memory.tools.jail import UnreadableFile, resolve_in_root
from live_memory.tools.outcome import FileRead, Span, ToolOutcome
from live_memory.tools.schema import TOOL_NAMES
from live_memory.tools.symbols import SymbolSource
from live_memory.tools.toolbox import Toolbox
from live_memory.tools.tree import build_directory_tree, list_workspace_files
from live_memory.tools.workspace_read import (
    current_sha256,
    read_workspace_bytes,
    read_workspace_text,
)

__all__ = [
    "TOOL_NAMES",
    "FileRead",
    "Span",
    "SymbolSource",
    "ToolOutcome",
    "Toolbox",
    "UnreadableFile",
    "build_directory_tree",
    "current_sha256",
    "list_workspace_files",
    "read_workspace_bytes",
    "read_workspace_text",
    "resolve_in_root",
]
