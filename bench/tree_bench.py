"""How long the directory tree takes on a 100k-file git repository (and without git).

Run: .venv/bin/python bench/tree_bench.py [--files N]
Builds the repository in a temp dir (files on disk, index filled with
`git update-index --index-info` because `git add` of 100k files takes minutes), then times
`list_workspace_files` and `build_directory_tree`, best of 3, and says whether the tree met
the one-second target.
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from live_memory.config.constants import (
    CHARS_PER_TOKEN,
    DIRECTORY_TREE_SHARE,
    FALLBACK_CONTEXT_TOKENS,
)
from live_memory.tools import build_directory_tree, list_workspace_files

__all__ = ["main"]

CONTENT = b"print('hello')\n"
TARGET_S = 1.0  # the project brief: the directory tree of 100k files in under a second


def build_repo(root: Path, count: int) -> list[str]:
    paths = [
        f"services/svc{i % 40:02d}/src/module{(i // 40) % 50:02d}/file_{i:06d}.py"
        for i in range(count)
    ]
    for rel in paths:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(CONTENT)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    blob = (
        subprocess.run(
            ["git", "-C", str(root), "hash-object", "-w", "--stdin"],
            input=CONTENT,
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .strip()
    )
    index_info = "".join(f"100644 {blob}\t{rel}\n" for rel in paths)
    subprocess.run(
        ["git", "-C", str(root), "update-index", "--add", "--index-info"],
        input=index_info.encode(),
        check=True,
    )
    return paths


def best_of(runs: int, action: Callable[[], object]) -> tuple[float, object]:
    best = float("inf")
    result: object = None
    for _ in range(runs):
        started = time.perf_counter()
        result = action()
        best = min(best, time.perf_counter() - started)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=100_000)
    options = parser.parse_args()
    max_chars = int(FALLBACK_CONTEXT_TOKENS * DIRECTORY_TREE_SHARE * CHARS_PER_TOKEN)
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp) / "repo"
        started = time.perf_counter()
        build_repo(root, options.files)
        print(f"built {options.files} files in {time.perf_counter() - started:.1f} s")

        listing_s, listed = best_of(3, lambda: list_workspace_files(root))
        assert isinstance(listed, list)
        tree_s, tree = best_of(3, lambda: build_directory_tree(root, max_chars))
        assert isinstance(tree, str)
        print(f"git  list_workspace_files: {listing_s * 1000:7.1f} ms ({len(listed)} files)")
        print(
            f"git  build_directory_tree: {tree_s * 1000:7.1f} ms "
            f"({len(tree)} chars, cap {max_chars})"
        )

        (root / ".git").rename(root / ".git-off")  # the same tree, now walked without git
        walk_s, walked = best_of(3, lambda: list_workspace_files(root))
        assert isinstance(walked, list)
        walk_tree_s, _ = best_of(3, lambda: build_directory_tree(root, max_chars))
        print(f"walk list_workspace_files: {walk_s * 1000:7.1f} ms ({len(walked)} files)")
        print(f"walk build_directory_tree: {walk_tree_s * 1000:7.1f} ms")
        slowest = max(tree_s, walk_tree_s)
        verdict = "met" if slowest < TARGET_S else "MISSED"
        print(f"target: tree under {TARGET_S:.0f} s for {options.files} files: {verdict}")
        print("tree head:\n" + "\n".join(tree.split("\n")[:8]) + "\n...\n" + tree.split("\n")[-1])


if __name__ == "__main__":
    main()
