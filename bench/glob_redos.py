"""Glob matching time on adversarial patterns of growing size: the curve stays flat.

Run: .venv/bin/python bench/glob_redos.py [--naive]
For each shape, prints the time of one match per size n. `--naive` also times the old
translation (`**/` -> `(?:.*/)?` in Python's backtracking `re`) in a subprocess killed after
5 s, to show the exponential curve it replaced (x4 per extra `**/`).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

from live_memory.path_glob import compile_glob

__all__ = ["main"]

SHAPES = {
    "'**/' * n + 'nomatch'": (
        lambda n: "**/" * n + "nomatch",
        lambda n: "/".join(["d"] * (n + 14)) + "/x.py",
    ),
    "'*a' * n + 'b'": (lambda n: "*a" * n + "b", lambda n: "a" * (10 * n)),
    "'**/*a*a*/' * n + 'x'": (
        lambda n: "**/*a*a*/" * n + "x",
        lambda n: "/".join(["a" * 40] * (2 * n)),
    ),
}
SIZES = (2, 4, 8, 12, 16, 32, 64, 96)
_NAIVE = """
import re, sys, time
n = int(sys.argv[1])
regex = re.compile("(?:.*/)?" * n + "nomatch", re.DOTALL)
path = "/".join(["d"] * (n + 14)) + "/x.py"
started = time.perf_counter()
regex.fullmatch(path)
print(time.perf_counter() - started)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--naive", action="store_true", help="also time the old translation")
    options = parser.parse_args()
    print(f"{'shape':26} " + " ".join(f"{'n=' + str(n):>9}" for n in SIZES) + "   (ms/match)")
    for name, (make_glob, make_path) in SHAPES.items():
        cells = []
        for n in SIZES:
            glob, path = compile_glob(make_glob(n)), make_path(n)
            started = time.perf_counter()
            for _ in range(100):
                glob.matches(path)
            cells.append(f"{(time.perf_counter() - started) * 10:9.4f}")
        print(f"{name:26} " + " ".join(cells))
    if options.naive:
        cells = []
        for n in (2, 4, 6, 8, 10, 12):
            try:
                done = subprocess.run(
                    [sys.executable, "-c", _NAIVE, str(n)],
                    capture_output=True,
                    text=True,
                    timeout=5,
                    check=True,
                )
                cells.append(f"n={n}: {float(done.stdout) * 1000:.1f} ms")
            except subprocess.TimeoutExpired:
                cells.append(f"n={n}: > 5 s (killed)")
                break
        print("old translation, '**/' * n + 'nomatch': " + ", ".join(cells))


if __name__ == "__main__":
    main()
