"""Helpers for the CLI tests: run the CLI in-process, and a real server subprocess."""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from live_memory.cli import run
from tests.support.app_server import AppServer

REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Outcome:
    code: int
    out: str
    err: str


def cli(argv: Sequence[str], environ: Mapping[str, str] | None = None) -> Outcome:
    """Run `live-memory ARGV` in-process; argparse's own exits are caught as codes."""
    out, err = io.StringIO(), io.StringIO()
    env = dict(environ or {})
    # Where the test servers publish their identity (tests/conftest.py), as a shell has it.
    env.setdefault("XDG_RUNTIME_DIR", os.environ["XDG_RUNTIME_DIR"])
    try:
        code = run(list(argv), env, out, err)
    except SystemExit as exc:
        code = int(exc.code or 0)
    return Outcome(code, out.getvalue(), err.getvalue())


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """An environment free of the developer's LIVE_MEMORY_/provider settings."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("LIVE_MEMORY_", "ANTHROPIC_", "OPENAI_", "CLAUDE_"))
    }
    env.update({"HOME": str(home), "PYTHONPATH": str(REPO)})
    env.update(extra)
    return env


def serve_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "live_memory.cli", "serve", *args]


@pytest.fixture(scope="module")
def real_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppServer]:
    """One real server (the app on loopback, no provider configured) shared by a module's
    tests; `test_serve` starts `live-memory serve` itself."""
    data = tmp_path_factory.mktemp("server-data")
    server = AppServer(data, {}).start()
    try:
        yield server
    finally:
        server.stop()
