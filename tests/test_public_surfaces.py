"""Each package's __init__ is its surface: other packages import from it, never from its inner
modules (a test of the rule, so a new reach-in fails here rather than in review).

`live_memory.config.constants` is public on purpose: the one table of named caps and defaults.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "live_memory"
PACKAGES = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file())
PUBLIC_MODULES = {"live_memory.config.constants"}


def _reach_ins() -> list[str]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).parts
        own = parts[0] if len(parts) > 1 else None
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                modules = [node.module]
            elif isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            else:
                continue
            for module in modules:
                dotted = module.split(".")
                if (
                    len(dotted) > 2
                    and dotted[0] == "live_memory"
                    and dotted[1] in PACKAGES
                    and dotted[1] != own
                    and module not in PUBLIC_MODULES
                ):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {module}")
    return found


def test_no_package_imports_another_packages_inner_module() -> None:
    assert _reach_ins() == []


@pytest.mark.parametrize("name", PACKAGES)
def test_every_package_states_its_surface(name: str) -> None:
    package = importlib.import_module(f"live_memory.{name}")
    exported = getattr(package, "__all__", None)

    assert isinstance(exported, list) and exported, f"live_memory.{name} has no __all__"
    missing = [n for n in exported if n not in ("AnthropicProvider", "OpenAIProvider")]
    assert [n for n in missing if not hasattr(package, n)] == []
