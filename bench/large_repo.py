"""Large repositories (issue 16): the OS watcher under a storm, memory per workspace, the tree.

Against a real `live-memory serve` (LIVE_MEMORY_WATCHER=os) and the scripted fake provider
over HTTP, on a generated git repository of `--files` tracked files (default 80,000; one
directory holds most of them) plus an ignored `node_modules/` of `--ignored` files (default
100,000), and on LIVE_MEMORY_BENCH_REPO too when it names a real checkout:

1. storm: a question reads two files (the window knows them), then `--storm` tracked files
   (default 70,000) are rewritten as fast as the disk allows; a third of the way in one of
   the known files is edited. Prints the time from that edit to "stale" in /stats (target
   under 2 s), the server's CPU during the storm, /health latency p50/p99 while it lasts
   (target p99 under 100 ms) and the watches in use. Then the same edit during a rewrite
   of the whole ignored node_modules (an `npm ci`).
2. rss: the server's RSS with 1, 10 and 50 loaded workspaces, each a hard-linked copy of a
   `--ws-files` repository (default 20,000 files) whose tree was built by a question
   (target: growth under 5 MB per workspace).
3. tree: build time of the directory tree (80,000-character budget) and the share of
   top-level directories visible in it.

    .venv/bin/python bench/large_repo.py [--parts storm,rss,tree] [--files 80000] ...

Generated repositories live in a temporary directory under /tmp and are removed at the end.
To measure an older commit, run this file with PYTHONPATH pointing at that commit's tree:
the server is started with the same interpreter and environment. The machine is shared (2
cores): read the figures as indicative, and keep in mind that generation takes a minute.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import _repo_root  # noqa: F401 (puts the repository root on sys.path for tests.support)
import httpx
from _proc import cpu_s, rss_mb

from live_memory.tools.tree import build_directory_tree
from tests.support.fakes import FakeProvider, Text, ToolUse
from tests.support.server_process import ServerProcess

TARGET = "packages/core/target.py"
OTHER = "packages/core/other.py"
TREE_CHARS = 80_000
STALE_WAIT_S = 120.0


def _git(root: Path, *args: str) -> None:
    # No background gc or maintenance: it would repack while the copies are hard-linked.
    quiet = ["-c", "gc.auto=0", "-c", "maintenance.auto=false"]
    subprocess.run(["git", "-C", str(root), *quiet, *args], check=True, capture_output=True)


def generate(root: Path, files: int, ignored: int) -> Path:
    """A repository shaped like the big ones: most files in one directory, a few dozen
    others of varied size, an ignored node_modules."""
    started = time.monotonic()
    big = int(files * 0.75)
    paths = [f"packages/web/src/m{i % 400:03d}/f{i}.ts" for i in range(big)]
    rest = files - big
    for i in range(rest):
        top = f"d{(i * 7) % 40:02d}"
        paths.append(f"{top}/sub{i % 9}/x{i}.py")
    paths += [TARGET, OTHER, "README.md"]
    paths += [f"node_modules/pkg{i % 2000:04d}/lib/f{i}.js" for i in range(ignored)]
    made: set[str] = set()
    for rel in paths:
        parent = rel.rpartition("/")[0]
        if parent not in made:
            (root / parent).mkdir(parents=True, exist_ok=True)
            made.add(parent)
        with open(root / rel, "w", encoding="utf-8") as handle:
            handle.write(f"// {rel}\n")
    (root / ".gitignore").write_text("node_modules/\n", encoding="utf-8")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "-c", "user.email=b@e", "-c", "user.name=b", "add", "-A")
    _git(root, "-c", "user.email=b@e", "-c", "user.name=b", "commit", "-qm", "generated")
    print(
        f"generated {files:,} tracked + {ignored:,} ignored files in "
        f"{time.monotonic() - started:.0f} s"
    )
    return root


_DATA_DIRS: list[Path] = []


def _data_dir() -> Path:
    """A server data directory, removed at the end like the generated repositories."""
    path = Path(tempfile.mkdtemp(prefix="lm-large-repo-data-", dir="/tmp"))
    _DATA_DIRS.append(path)
    return path


def _stale(client: httpx.Client, url: str, root: Path) -> int:
    stats = client.get(f"{url}/stats", params={"cwd": str(root)}).json()
    return int(stats["file_contexts"]["stale"])


class _HealthProbe(threading.Thread):
    """GET /health every 50 ms until stopped; keeps the latencies."""

    def __init__(self, url: str) -> None:
        super().__init__(daemon=True)
        self.url = url
        self.latencies: list[float] = []
        self.failures = 0
        self.last: dict[str, Any] = {}
        self.stop = threading.Event()

    def run(self) -> None:
        with httpx.Client(timeout=30) as client:
            while not self.stop.is_set():
                started = time.monotonic()
                try:
                    reply = client.get(f"{self.url}/health")
                    if reply.status_code != 200:
                        self.failures += 1
                    else:
                        self.last = reply.json().get("watcher") or {}
                except httpx.HTTPError:
                    self.failures += 1
                self.latencies.append(time.monotonic() - started)
                self.stop.wait(0.05)


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _rewrite(paths: list[Path], tag: str, edit: tuple[int, Path], box: dict[str, float]) -> None:
    """Rewrite every path; at index edit[0] also edit edit[1], noting when in `box`."""
    for i, path in enumerate(paths):
        try:
            with open(path, "a", encoding="utf-8") as handle:
                handle.write(tag)
        except OSError:
            continue
        if i == edit[0]:
            with open(edit[1], "a", encoding="utf-8") as handle:
                handle.write(f"# edited {tag}\n")
            box["edited"] = time.monotonic()
    box["done"] = time.monotonic()


def storm(root: Path, storm_paths: int, label: str, target: str, other: str) -> None:
    tracked = (
        subprocess.run(["git", "-C", str(root), "ls-files", "-z"], capture_output=True, check=True)
        .stdout.decode()
        .split("\0")
    )
    victims = [root / p for p in tracked if p and p not in (target, other)][:storm_paths]
    with FakeProvider() as fake:
        fake.script(
            ToolUse("Read", {"file_path": target}),
            ToolUse("Read", {"file_path": other}),
            Text("read"),
        )
        env = {
            "LIVE_MEMORY_PROVIDER": "anthropic",
            "LIVE_MEMORY_BASE_URL": fake.url,
            "LIVE_MEMORY_API_KEY": "bench",
            "LIVE_MEMORY_WATCHER": "os",
            "LIVE_MEMORY_PASSIVATE_AFTER_S": "3600",
        }
        with ServerProcess(_data_dir(), env) as server:
            assert server.proc is not None
            pid = server.proc.pid
            with httpx.Client(timeout=120) as client:
                started = time.monotonic()
                reply = client.post(
                    f"{server.url}/api/ask", json={"question": "read", "cwd": str(root)}
                )
                reply.raise_for_status()
                print(f"[{label}] first question (tree built): {time.monotonic() - started:.1f} s")
                time.sleep(2.0)  # let the watcher finish placing its watches
                health = client.get(f"{server.url}/health").json().get("watcher", {})
                print(f"[{label}] watcher before the storm: {health}")
                # Each storm edits a different known file (one stale file is not staler).
                for name, paths, edited in (
                    (f"{len(victims):,} tracked files rewritten", victims, target),
                    ("the ignored node_modules rewritten", _ignored_files(root), other),
                ):
                    if paths:
                        _one_storm(
                            client,
                            server.url,
                            pid,
                            root,
                            paths=paths,
                            target=edited,
                            label=label,
                            name=name,
                        )


def _ignored_files(root: Path) -> list[Path]:
    modules = root / "node_modules"
    if not modules.is_dir():
        return []
    return [Path(d) / f for d, _, names in os.walk(modules) for f in names]


def _one_storm(
    client: httpx.Client,
    url: str,
    pid: int,
    root: Path,
    *,
    paths: list[Path],
    target: str,
    label: str,
    name: str,
) -> None:
    before = _stale(client, url, root)
    probe = _HealthProbe(url)
    probe.start()
    cpu0, wall0 = cpu_s(pid), time.monotonic()
    box: dict[str, float] = {}
    writer = threading.Thread(
        target=_rewrite, args=(paths, f"#{time.time()}\n", (len(paths) // 3, root / target), box)
    )
    writer.start()
    stale_after = None
    deadline = time.monotonic() + STALE_WAIT_S
    while time.monotonic() < deadline:
        edited = box.get("edited")
        if edited is not None and _stale(client, url, root) > before:
            stale_after = time.monotonic() - edited
            break
        time.sleep(0.05)
    writer.join()
    writing = box["done"] - wall0
    # Let the storm settle, then read the watcher's own account.
    time.sleep(3.0)
    cpu = cpu_s(pid) - cpu0
    wall = time.monotonic() - wall0
    probe.stop.set()
    probe.join()
    lat = probe.latencies
    print(
        f"[{label}] {name}: edit -> stale "
        + (
            f"{stale_after:.2f} s"
            if stale_after is not None
            else f"not within {STALE_WAIT_S:.0f} s"
        )
        + f" (the rewrite took {writing:.1f} s, the edit at its third)"
        + f"; server CPU {cpu:.1f} s over {wall:.1f} s ({100 * cpu / wall:.0f} % of a core)"
        + f"; /health p50 {1000 * _pct(lat, 0.5):.0f} ms p99 {1000 * _pct(lat, 0.99):.0f} ms "
        + f"max {1000 * max(lat, default=0):.0f} ms over {len(lat)} probes, "
        + f"{probe.failures} failed; watches {probe.last.get('watches', 'n/a')}"
    )
    _git(root, "checkout", "-q", "--", ".")  # undo the rewrite for the next part
    time.sleep(3.0)  # and let the watcher settle that storm too


def rss(base: Path, ws_files: int, counts: list[int]) -> None:
    template = generate(base / "template", ws_files, 0)
    started = time.monotonic()
    copies = [template]
    for i in range(1, max(counts)):
        copy = base / f"ws{i:02d}"
        subprocess.run(["cp", "-al", str(template), str(copy)], check=True)
        copies.append(copy)
    print(f"made {len(copies)} hard-linked copies in {time.monotonic() - started:.0f} s")
    with FakeProvider() as fake:
        fake.responder = lambda recorded: Text("answer")
        env = {
            "LIVE_MEMORY_PROVIDER": "anthropic",
            "LIVE_MEMORY_BASE_URL": fake.url,
            "LIVE_MEMORY_API_KEY": "bench",
            "LIVE_MEMORY_PASSIVATE_AFTER_S": "3600",
        }
        with ServerProcess(_data_dir(), env) as server:
            assert server.proc is not None
            pid = server.proc.pid
            print(f"[rss] idle server: {rss_mb(pid):.0f} MB")
            loaded = 0
            marks: dict[int, float] = {}
            with httpx.Client(timeout=300) as client:
                for count in counts:
                    while loaded < count:
                        reply = client.post(
                            f"{server.url}/api/ask",
                            json={"question": "what is here?", "cwd": str(copies[loaded])},
                        )
                        reply.raise_for_status()
                        loaded += 1
                    time.sleep(1.0)
                    marks[count] = rss_mb(pid)
                    threads = len(os.listdir(f"/proc/{pid}/task"))
                    print(
                        f"[rss] {count} loaded workspaces: {marks[count]:.0f} MB, {threads} threads"
                    )
            if len(counts) >= 2:
                lo, hi = counts[0], counts[-1]
                per = (marks[hi] - marks[lo]) / (hi - lo)
                print(f"[rss] growth per workspace ({lo} -> {hi}): {per:.1f} MB")


def tree(root: Path, label: str) -> None:
    started = time.monotonic()
    text = build_directory_tree(root, TREE_CHARS)
    took = time.monotonic() - started
    listed = subprocess.run(
        ["git", "-C", str(root), "ls-files"], capture_output=True, check=True, text=True
    ).stdout.split("\n")
    tops = {p.split("/")[0] for p in listed if "/" in p}
    shown = {line.split("/")[0] for line in text.split("\n") if line and line[0] != " "}
    lines = text.split("\n")
    biggest = max(tops, key=lambda t: sum(1 for p in listed if p.startswith(t + "/")))
    first = next((i for i, line in enumerate(lines) if line.startswith(biggest + "/")), None)
    print(
        f"[{label}] tree: built in {took:.2f} s, {len(text):,} of {TREE_CHARS:,} chars, "
        f"{len(lines):,} lines; top-level directories visible {len(tops & shown)}/{len(tops)}; "
        f"the largest ({biggest}/) at line {first}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--parts", default="storm,rss,tree")
    parser.add_argument("--files", type=int, default=80_000)
    parser.add_argument("--ignored", type=int, default=100_000)
    parser.add_argument("--storm", type=int, default=70_000)
    parser.add_argument("--ws-files", type=int, default=20_000)
    parser.add_argument("--workspaces", default="1,10,50")
    parser.add_argument(
        "--real-only", action="store_true", help="only LIVE_MEMORY_BENCH_REPO, no generated repo"
    )
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    base = Path(tempfile.mkdtemp(prefix="lm-large-repo-", dir="/tmp"))
    try:
        if parts & {"storm", "tree"} and not args.real_only:
            repo = generate(base / "repo", args.files, args.ignored)
            if "tree" in parts:
                tree(repo, "generated")
            if "storm" in parts:
                storm(repo, args.storm, "generated", TARGET, OTHER)
        real = os.environ.get("LIVE_MEMORY_BENCH_REPO")
        if real:
            real_root = Path(real)
            if "tree" in parts:
                tree(real_root, "real")
            if "storm" in parts:
                files = subprocess.run(
                    ["git", "-C", real, "ls-files"], capture_output=True, text=True, check=True
                ).stdout.split("\n")
                storm(real_root, args.storm, "real", files[len(files) // 2], files[1])
        if "rss" in parts:
            rss(base, args.ws_files, [int(n) for n in args.workspaces.split(",")])
    finally:
        for path in [base, *_DATA_DIRS]:
            shutil.rmtree(path, ignore_errors=True)


if __name__ == "__main__":
    main()
