"""Installing a pinned agent CLI from npm once per machine into `<repo>/.cache/<name>/<version>/`
(git-ignored) and reusing it: without node/npm a test skips locally and fails under CI=true;
an npm failure always fails."""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

__all__ = ["Session", "in_ci", "install_npm_cli", "locked", "run_session"]

REPO = Path(__file__).resolve().parents[2]
INSTALL_TIMEOUT_S = 300.0
VERSION_TIMEOUT_S = 30.0


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """Serialise installs between concurrent test processes on one machine."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _working(command: list[str], version: str) -> bool:
    try:
        done = subprocess.run(
            [*command, "--version"],
            capture_output=True,
            text=True,
            timeout=VERSION_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0 and version in done.stdout


def install_npm_cli(name: str, package: str, version: str, binary: str) -> list[str]:
    """The pinned CLI's command line (`node_modules/.bin/<binary>`), installed on first use."""
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None:
        reason = f"node and npm are needed to install {package}@{version}"
        if in_ci():
            pytest.fail(f"CI=true but {reason}; none on PATH")
        pytest.skip(reason)
    cache = REPO / ".cache" / name
    prefix = cache / version
    command = [str(prefix / "node_modules" / ".bin" / binary)]
    with locked(cache / ".install.lock"):
        if _working(command, version):
            return command
        shutil.rmtree(prefix, ignore_errors=True)  # a half-finished install is not repaired
        prefix.mkdir(parents=True)
        install = [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund"]
        install += ["--loglevel=error", f"{package}@{version}"]
        try:
            done = subprocess.run(
                install, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S, check=False
            )
        except subprocess.TimeoutExpired:
            pytest.fail(f"`{' '.join(install)}` took over {INSTALL_TIMEOUT_S:.0f}s (registry?)")
        if done.returncode != 0:
            tail = "\n".join((done.stderr + done.stdout).strip().splitlines()[-30:])
            pytest.fail(f"`{' '.join(install)}` exited {done.returncode}:\n{tail}")
        if not _working(command, version):
            pytest.fail(f"{package}@{version} installed in {prefix} but `--version` fails")
        return command


@dataclass(frozen=True, slots=True)
class Session:
    """How one headless agent run ended (`returncode` None: killed at its timeout)."""

    returncode: int | None
    stdout: bytes
    stderr: bytes


def run_session(
    command: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    timeout_s: float,
    stdin: int | None = subprocess.DEVNULL,
) -> Session:
    """Run an agent CLI in a process group of its own until it exits; past `timeout_s` the
    whole group is killed (its MCP and hook children too) and TimeoutExpired is raised."""
    process = subprocess.Popen(
        command,
        cwd=cwd,
        env=env,
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=timeout_s)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
    return Session(process.returncode, stdout, stderr)
