"""The package builds an sdist and a wheel (the wheel from the sdist, so the sdist is complete),
and the wheel installs into a fresh virtualenv whose `live-memory --version` is this version.

Publishing later is then one `twine upload dist/*`. The fresh venv gets the wheel without its
dependencies (`--no-deps`, no package index needed) and borrows them from the test's own
environment through a .pth file, which adds directories but runs none of their .pth hooks: the
editable install of the checkout stays out, and `live_memory` is imported from the wheel.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import tarfile
import venv
from pathlib import Path

import pytest

from live_memory import __version__

pytestmark = pytest.mark.slow  # builds an sdist and a wheel, makes a venv

REPO = Path(__file__).resolve().parents[1]
BUILD_TIMEOUT_S = 300


def _run(argv: list[str], cwd: Path, **env: str) -> str:
    done = subprocess.run(
        argv,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT_S,
        env={**os.environ, **env},
        check=False,
    )
    assert done.returncode == 0, f"{argv} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_the_wheel_from_the_sdist_installs_and_reports_the_version(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    # --no-isolation: the build backend of the dev extra, not two fresh envs from the index.
    build = [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(REPO)]
    _run(build, cwd=tmp_path)
    (sdist,) = dist.glob("*.tar.gz")
    (wheel,) = dist.glob("*.whl")
    assert wheel.name == f"live_memory-{__version__}-py3-none-any.whl"
    with tarfile.open(sdist) as archive:
        names = set(archive.getnames())
    root = f"live_memory-{__version__}"
    assert {f"{root}/pyproject.toml", f"{root}/README.md"} <= names
    assert f"{root}/live_memory/providers/pricing.json" in names

    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)  # this pip installs into it: faster
    python = env_dir / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet"]
    # No PYTHONPATH into the target: a checkout on it (with the egg-info the build leaves there)
    # makes pip see live-memory as installed already and skip the wheel (no bin/live-memory).
    clean = {"PYTHONPATH": "", "PYTHONNOUSERSITE": "1"}
    _run([*pip, "--no-deps", str(wheel)], cwd=tmp_path, **clean)
    site = Path(
        _run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            cwd=tmp_path,
        ).strip()
    )
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (site / "borrowed-dependencies.pth").write_text("\n".join(sorted(ours)) + "\n")

    version = _run([str(env_dir / "bin" / "live-memory"), "--version"], cwd=tmp_path, **clean)
    assert version == f"live-memory {__version__}\n"
    where = _run(
        [str(python), "-c", "import live_memory; print(live_memory.__file__)"],
        cwd=tmp_path,
        **clean,
    )
    assert Path(where.strip()).is_relative_to(env_dir)  # the wheel, not the checkout
    help_text = _run(
        [str(env_dir / "bin" / "live-memory"), "serve", "--help"], cwd=tmp_path, **clean
    )
    assert "--data-dir" in help_text

    # `live-memory connect` from the wheel (no checkout): the hook client comes as data files
    # and is copied into the user's data dir, byte for byte plugin/scripts'.
    home = tmp_path / "home"
    home.mkdir()
    _run(
        [str(env_dir / "bin" / "live-memory"), "connect", "gemini"],
        cwd=tmp_path,
        **clean,
        HOME=str(home),
        LIVE_MEMORY_PORT="1",
    )
    hooks = home / ".local" / "share" / "live-memory" / "hooks"
    for name in ("notify.py", "session-start.py", "server-identity.py", "opencode-plugin.js"):
        assert (hooks / name).read_bytes() == (REPO / "plugin" / "scripts" / name).read_bytes()
