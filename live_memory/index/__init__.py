"""The structural index of the code: tree-sitter definitions and references per file.

`SymbolIndexes` (one per server) owns the per-workspace indexes and the one thread that fills
them; `WorkspaceIndex` answers lookups; `render_core_map` renders the ranked core map for the
stable prefix; `lookup_symbols` is the index's part of the per-question retrieval delta.
"""

from __future__ import annotations

from live_memory.index.core_map import render_core_map, symbol_line
from live_memory.index.extract import Definition, FileSymbols, extract_symbols
from live_memory.index.languages import LANGUAGES, language_of
from live_memory.index.lookup import SymbolHits, lookup_symbols, question_names
from live_memory.index.store import FileStamp, SymbolRow, SymbolStore
from live_memory.index.worker import SymbolIndexes
from live_memory.index.workspace_index import Coverage, WorkspaceIndex

__all__ = [
    "LANGUAGES",
    "Coverage",
    "Definition",
    "FileStamp",
    "FileSymbols",
    "SymbolHits",
    "SymbolIndexes",
    "SymbolRow",
    "SymbolStore",
    "WorkspaceIndex",
    "extract_symbols",
    "language_of",
    "lookup_symbols",
    "question_names",
    "render_core_map",
    "symbol_line",
]
