"""Our Grep (ripgrep engine) against raw `rg` on a 20k-file repository.

Run: .venv/bin/python bench/grep_bench.py [--files N] [--runs N] [--root DIR] [--fallback]
With LIVE_MEMORY_BENCH_REPO=/path/to/a/checkout the same table is printed for that tree too.
Each pattern and mode runs without and with a glob (`*.py`: raw rg gets `-g '*.py'`).
Builds a git repository of generated Python files (about 67 MiB for 20k files), then times
each pattern in each mode against the raw `rg` run that answers the same question: `rg -l`
for files_with_matches, `rg -c` for count, `rg -n` for content (which prints every matching
line; Grep shows at most 2000). Runs alternate (rg, Grep, rg, Grep, ...) so both see the same
machine load; the best of --runs is kept and "ratio" is Grep / rg (the target is <= 1.3).
"cpu" is the same ratio of CPU seconds (user + system, rg's and ours), which a shared machine
disturbs less than wall time. "1st" is a fresh toolbox's first search. --fallback also times
the pure-Python engine once.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
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


def timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def cpu_timed(action: Callable[[], object]) -> tuple[float, float]:
    """(wall, CPU) seconds of `action`: this process's and its children's user + system."""
    before = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    wall = timed(action)
    after = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    cpu = sum(
        a.ru_utime + a.ru_stime - b.ru_utime - b.ru_stime
        for a, b in zip(after, before, strict=True)
    )
    return wall, cpu


def raw_rg(rg: str, root: Path, flag: str, pattern: str, glob: str | None) -> Callable[[], object]:
    globs = ["-g", glob] if glob else []

    def run() -> None:
        # stdout to a file, as Grep does: draining a pipe would slow the raw side down.
        # (Not /dev/null: rg notices it and stops at the first match.)
        with tempfile.TemporaryFile() as out:
            subprocess.run(
                [rg, "--no-config", flag, *globs, "--", pattern],
                cwd=root,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.DEVNULL,
                check=False,
            )

    return run


def ours(toolbox: Toolbox, mode: str, pattern: str, glob: str | None) -> Callable[[], object]:
    arguments = {"pattern": pattern, "output_mode": mode, "-i": False, "head_limit": 0}
    if glob:
        arguments["glob"] = glob
    return lambda: toolbox.run("Grep", arguments)


MODES = (("files_with_matches", "-l"), ("count", "-c"), ("content", "-n"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=5, help="best of this many, interleaved")
    parser.add_argument("--root", type=Path, help="build the tree here (or reuse it) and keep it")
    parser.add_argument("--fallback", action="store_true", help="also time the Python engine")
    parser.add_argument("--skip-check", action="store_true", help="skip the agreement check")
    options = parser.parse_args()
    rg = find_ripgrep()
    if rg is None:
        raise SystemExit("no rg binary found")
    with tempfile.TemporaryDirectory() as temp:
        root = options.root or Path(temp) / "repo"
        if not root.exists():
            started = time.perf_counter()
            size = build_repo(root, options.files)
            print(
                f"built {options.files} files, {size / 1_048_576:.0f} MiB, "
                f"in {time.perf_counter() - started:.1f} s"
            )
        print(f"tree {root}; rg = {rg}")
        compare(rg, root, options.runs, fallback=options.fallback)
        if not options.skip_check:
            check_agreement(root)
        real = os.environ.get("LIVE_MEMORY_BENCH_REPO")
        if real:
            print(f"\nLIVE_MEMORY_BENCH_REPO {real}")
            compare(rg, Path(real), options.runs, fallback=False)


def compare(rg: str, root: Path, runs: int, *, fallback: bool) -> None:
    fast = Toolbox(root)
    slow = Toolbox(root, use_ripgrep=False)
    header = (
        f"{'pattern':42} {'mode':18} {'glob':5} {'rg':>6} {'Grep':>6} {'ratio':>6} {'median':>6} "
        f"{'cpu':>5} {'1st':>6}"
    )
    if fallback:
        header += f" {'python':>7}"
    print(header + f"   (ms, best of {runs}; median = ratio of the medians)")
    ratios: list[float] = []
    cpu_ratios: list[float] = []
    for pattern in PATTERNS:
        raw_rg(rg, root, "-l", pattern, None)()  # warm the page cache
        for (mode, flag), glob in ((m, g) for m in MODES for g in (None, "*.py")):
            first = timed(ours(Toolbox(root), mode, pattern, glob))
            raw_runs, our_runs, raw_cpu, our_cpu = [], [], [], []
            for _ in range(runs):
                wall, cpu = cpu_timed(raw_rg(rg, root, flag, pattern, glob))
                raw_runs.append(wall)
                raw_cpu.append(cpu)
                wall, cpu = cpu_timed(ours(fast, mode, pattern, glob))
                our_runs.append(wall)
                our_cpu.append(cpu)
            raw, our = min(raw_runs), min(our_runs)
            median = sorted(our_runs)[runs // 2] / sorted(raw_runs)[runs // 2]
            ratios.append(our / raw)
            cpu_ratios.append(min(our_cpu) / max(min(raw_cpu), 1e-6))
            line = (
                f"{pattern:42} {mode:18} {glob or '-':5} {raw * 1000:6.0f} {our * 1000:6.0f} "
                f"{our / raw:6.2f} {median:6.2f} {cpu_ratios[-1]:5.2f} {first * 1000:6.0f}"
            )
            if fallback:
                line += f" {timed(ours(slow, mode, pattern, glob)) * 1000:7.0f}"
            print(line, flush=True)
    print(
        f"worst ratio {max(ratios):.2f}, median {sorted(ratios)[len(ratios) // 2]:.2f}; "
        f"cpu: worst {max(cpu_ratios):.2f}, median {sorted(cpu_ratios)[len(cpu_ratios) // 2]:.2f}"
    )


def check_agreement(root: Path) -> None:
    fast = Toolbox(root)
    slow = Toolbox(root, use_ripgrep=False)
    for pattern in PATTERNS:
        for mode, _ in MODES:
            arguments = {"pattern": pattern, "output_mode": mode, "head_limit": 0}
            if fast.run("Grep", arguments).text != slow.run("Grep", arguments).text:
                print(f"rg and the best-effort fallback differ on {pattern!r} in {mode} mode")
    print("rg and fallback compared on every pattern and mode")


if __name__ == "__main__":
    main()
