"""Shared helpers for the plugin tests: paths, the real hook payloads, running a script."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.plugin.capture_server import CaptureServer
from tests.support.fixtures import HOOK_PAYLOADS

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "plugin"
SCRIPTS = PLUGIN / "scripts"
FIXTURES = HOOK_PAYLOADS
CAPTURED_PROJECT = "/home/dev/project"
SCRIPT_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Ran:
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    cpu_seconds: float
    """The script's own user + system CPU time: the work it did, which a loaded machine
    disturbs far less than its wall time."""


def run_script(
    name: str, stdin: bytes | str, env: Mapping[str, str], args: tuple[str, ...] = ()
) -> Ran:
    """Run a plugin script the way hooks.json does: `python3 -I -S script`, stdlib only."""
    data = stdin.encode() if isinstance(stdin, str) else stdin
    # The children's rusage counts only children this process has reaped, and tests in one
    # process run one at a time: the difference is this script's (and what it spawned).
    cpu_before = _children_cpu_s()
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-I", "-S", str(SCRIPTS / name), *args],
        input=data,
        capture_output=True,
        env=dict(env),
        timeout=SCRIPT_TIMEOUT_S,
        check=False,
    )
    return Ran(
        done.returncode,
        done.stdout.decode(),
        done.stderr.decode(),
        time.perf_counter() - started,
        _children_cpu_s() - cpu_before,
    )


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def hook_payloads(project: Path) -> dict[str, dict[str, object]]:
    """The captured Claude Code payloads, with their paths moved into `project`."""
    text = FIXTURES.read_text(encoding="utf-8").replace(CAPTURED_PROJECT, str(project))
    return {name: entry["stdin"] for name, entry in json.loads(text).items()}


@dataclass
class HookWorld:
    """A project dir with the fixture files, a private plugin data dir, and a script env."""

    project: Path
    data: Path
    env: dict[str, str]

    def at(self, port: int) -> dict[str, str]:
        return {**self.env, "LIVE_MEMORY_PORT": str(port)}

    @property
    def spool_file(self) -> Path:
        return self.data / "spool" / "events.jsonl"


@pytest.fixture
def world(tmp_path: Path) -> HookWorld:
    project = tmp_path / "project"
    project.mkdir()
    (project / "input.txt").write_text("hello from input.txt: the answer is 42\n")
    (project / "out.txt").write_text("line one\nline 2 edited\n")
    (project / "watched.txt").write_text("watched\n")
    home = tmp_path / "home"
    home.mkdir()
    data = tmp_path / "plugin-data"
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "CLAUDE_PLUGIN_DATA": str(data),
        "CLAUDE_PLUGIN_ROOT": str(PLUGIN),
        "CLAUDE_PROJECT_DIR": str(project),
        "XDG_RUNTIME_DIR": os.environ["XDG_RUNTIME_DIR"],  # where servers publish identity
    }
    return HookWorld(project=project, data=data, env=env)


@pytest.fixture
def capture() -> Iterator[CaptureServer]:
    with CaptureServer() as server:
        yield server
