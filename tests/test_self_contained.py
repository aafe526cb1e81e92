"""The repository stands alone: nothing committed reaches for a directory beside the clone."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from tests.support.fixtures import HOOK_PAYLOADS, LOCAL_MODEL, TRANSCRIPT

REPO = Path(__file__).resolve().parents[1]
# Spelt in pieces so that this file does not match itself.
OUTSIDE = re.compile("|".join([r"\.\./" + "shared", "/" + "work/", "shared/" + "fixtures"]))
SKIPPED_SUFFIXES = (".pyc", ".png", ".jpg", ".gz")


def _tracked_files() -> list[Path]:
    """Files git tracks plus new ones not ignored; every file when this is not a checkout."""
    try:
        listed = subprocess.run(
            ["git", "-C", str(REPO), "ls-files", "--cached", "--others", "--exclude-standard"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        skip = {".venv", ".git", ".mypy_cache", ".ruff_cache", ".pytest_cache"}
        return [
            path
            for path in REPO.rglob("*")
            if path.is_file() and not skip.intersection(path.relative_to(REPO).parts)
        ]
    return [REPO / name for name in listed if (REPO / name).is_file()]


def test_no_file_points_outside_the_repository() -> None:
    offenders = []
    files = _tracked_files()
    for path in files:
        if path.suffix in SKIPPED_SUFFIXES:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), 1):
            if OUTSIDE.search(line):
                offenders.append(f"{path.relative_to(REPO)}:{number}: {line.strip()[:120]}")
    assert len(files) > 50  # the listing found the repository, not an empty directory
    assert offenders == [], "\n".join(offenders)


def test_the_fixtures_the_tests_read_are_in_the_repository() -> None:
    assert HOOK_PAYLOADS.is_file() and TRANSCRIPT.is_file()
    assert (LOCAL_MODEL / "README.md").is_file()
    assert HOOK_PAYLOADS.is_relative_to(REPO) and TRANSCRIPT.is_relative_to(REPO)
