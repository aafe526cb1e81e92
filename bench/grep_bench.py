"""Our Grep (ripgrep engine) against raw `rg` on a 20k-file repository.

Run: .venv/bin/python bench/grep_bench.py [--files N] [--fallback]
Builds a git repository of generated Python files (about 75 MiB for 20k files), then times,
best of 3 with a warm page cache: raw `rg -l` / `rg -c` walking the tree, and
Toolbox.run("Grep") in files_with_matches and count modes. "1st" is a fresh toolbox's first
search, which also sniffs every matching file for binary content (later searches reuse the
verdicts). --fallback also times the pure-Python engine once.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from live_memory.tools import Toolbox
from live_memory.tools.ripgrep import find_ripgrep

__all__ = ["main"]

PATTERNS = [
    "TODO",
    "(?i)todo: fix (value|state)",
    r"\w+_\d{5}\(self",
    "[a-z]+ (None|True) [a-z]+ (cache|state)$",
]
WORDS = [
    "self",
    "value",
    "state",
    "cache",
    "None",
    "True",
    "False",
    "return",
    "def",
    "class",
    "import",
    "from",
    "todo",
    "fix",
    "TODO",
    "alpha",
    "beta",
    "gamma",
    "delta",
    "result",
    "handler",
    "config",
    "item",
    "index",
]


def build_repo(root: Path, count: int) -> int:
    rng = random.Random(20_000)
    total = 0
    for index in range(count):
        lines = []
        for line_no in range(60):
            words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 10)))
            lines.append(f"    {words} x_{(index * 60 + line_no) % 100_000:05d}(self)")
        if index % 97 == 0:
            lines.append("    # todo: fix value handling")
        text = "\n".join(lines) + "\n"
        path = root / f"pkg{index % 50:02d}" / f"sub{index % 13:02d}" / f"mod_{index:05d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        total += len(text)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    return total


def best_of(runs: int, action: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - started)
    return best


def raw_rg(rg: str, root: Path, flag: str, pattern: str) -> Callable[[], object]:
    return lambda: subprocess.run(
        [rg, "--no-config", flag, "--", pattern], cwd=root, capture_output=True, check=False
    )


def ours(toolbox: Toolbox, mode: str, pattern: str) -> Callable[[], object]:
    arguments = {"pattern": pattern, "output_mode": mode, "-i": False, "head_limit": 0}
    return lambda: toolbox.run("Grep", arguments)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--fallback", action="store_true", help="also time the Python engine")
    options = parser.parse_args()
    rg = find_ripgrep()
    if rg is None:
        raise SystemExit("no rg binary found")
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp) / "repo"
        started = time.perf_counter()
        size = build_repo(root, options.files)
        print(
            f"built {options.files} files, {size / 1_048_576:.0f} MiB, "
            f"in {time.perf_counter() - started:.1f} s; rg = {rg}"
        )
        fast = Toolbox(root)
        slow = Toolbox(root, use_ripgrep=False)
        header = (
            f"{'pattern':44} {'rg -l':>7} {'Grep files 1st':>15} {'Grep files':>11} "
            f"{'rg -c':>7} {'Grep count':>11}"
        )
        if options.fallback:
            header += f" {'python files':>13}"
        print(header + "   (ms)")
        for pattern in PATTERNS:
            raw_rg(rg, root, "-l", pattern)()  # warm the page cache
            first = best_of(1, ours(Toolbox(root), "files_with_matches", pattern))  # cold sniffs
            row = [
                best_of(3, raw_rg(rg, root, "-l", pattern)),
                first,
                best_of(3, ours(fast, "files_with_matches", pattern)),
                best_of(3, raw_rg(rg, root, "-c", pattern)),
                best_of(3, ours(fast, "count", pattern)),
            ]
            widths = (7, 15, 11, 7, 11)
            line = f"{pattern:44} " + " ".join(
                f"{seconds * 1000:{width}.0f}" for seconds, width in zip(row, widths, strict=True)
            )
            if options.fallback:
                line += f" {best_of(1, ours(slow, 'files_with_matches', pattern)) * 1000:13.0f}"
            print(line)
        same = fast.run("Grep", {"pattern": PATTERNS[2], "output_mode": "count", "head_limit": 0})
        check = slow.run("Grep", {"pattern": PATTERNS[2], "output_mode": "count", "head_limit": 0})
        print(f"rg and fallback agree on {PATTERNS[2]!r}: {same.text == check.text}")


if __name__ == "__main__":
    main()
