"""The provider package never reads the app's settings: it is fed plain values.

`config.constants` (the one table of named caps and provider facts) is the only part of
`live_memory.config` it may use.
"""

from __future__ import annotations

import ast
from pathlib import Path

import live_memory.providers

PACKAGE = Path(live_memory.providers.__file__).parent


def _config_imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        found += [n for n in names if n.startswith("live_memory.config")]
    return found


def test_providers_import_nothing_from_config_but_its_constants() -> None:
    allowed = {"live_memory.config.constants"}
    reached = {
        f"{path.name}: {name}"
        for path in sorted(PACKAGE.glob("*.py"))
        for name in _config_imports(path)
        if name not in allowed
    }

    assert reached == set()
