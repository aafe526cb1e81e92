"""The structural index at scale (issue 17 item 3): index time, RSS, updates, first-prompt hits.

Against a real `live-memory serve` and the scripted fake provider over HTTP, on a generated git
repository of `--files` source files (default 20,000: Python, TypeScript, Go and Rust, each
file defining a few functions/classes and calling shared "core" helpers), or on `--repo DIR`
(a real checkout; ground truth is then the index's own rows, checked against the file text):

1. background pass: wall time from the workspace's creation until /stats says the index is
   complete, the server's CPU time over it (the pass is capped at INDEX_CPU_SHARE of a core),
   and the server's RSS before, at its peak during the pass, and after.
2. incremental update: `--edits` files are rewritten (a definition moved down two lines) and
   re-indexed one by one with the index's own update path (WorkspaceIndex.update on the
   server's database, as the index thread runs it for /notify); prints p50 / p95 / max
   (target under 50 ms per file) and the thread CPU time per update; the WAL checkpoint the
   index thread runs when idle is timed apart (it never runs inside an update).
3. first prompt: `--questions` random definitions (default 200) are asked about, "Where is
   `NAME` defined?", the fake answering at once without tools. Prints the share whose FIRST
   request already holds the right `path:line` (target at least 90 %), the model tool calls
   (target 0) and how many questions needed a second model call (the cold guard's re-ask).

    .venv/bin/python bench/symbol_lookup.py [--files 20000] [--repo DIR] [--questions 200]
    .venv/bin/python bench/symbol_lookup.py --updates-only [--edits 300]   # step 2 alone

The machine is shared (2 cores): read the figures as indicative.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import _repo_root  # noqa: F401 (puts the repository root on sys.path for tests.support)

from live_memory.config import constants as C
from live_memory.index import SymbolStore, WorkspaceIndex
from tests.support.fakes import FakeProvider, Text
from tests.support.server_process import ServerProcess

WORDS = [
    *("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india"),
    *("juliet", "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo"),
    *("sierra", "tango", "uniform", "victor", "whiskey", "xray", "yankee", "zulu"),
]
CORE = 60  # shared helpers every file calls a few of (what the core map should rank first)


def _name(rng: random.Random, i: int, j: int) -> str:
    return f"{rng.choice(WORDS)}_{rng.choice(WORDS)}_{i}_{j}"


def _python(rng: random.Random, i: int) -> tuple[str, list[tuple[str, int]]]:
    lines = [f"from core.helpers import core_helper_{rng.randrange(CORE)}", ""]
    defs = []
    for j in range(3):
        name = _name(rng, i, j)
        defs.append((name, len(lines) + 1))
        lines += [
            f"def {name}(value, limit=10):",
            f'    """Compute {name} for one value."""',
            f"    return core_helper_{rng.randrange(CORE)}(value) + limit",
            "",
        ]
    cls = f"Model{i}"
    defs.append((cls, len(lines) + 1))
    lines += [f"class {cls}:", "    def run(self):", "        return 1", ""]
    return "\n".join(lines), defs


def _typescript(rng: random.Random, i: int) -> tuple[str, list[tuple[str, int]]]:
    lines = [f'import {{ coreHelper{rng.randrange(CORE)} }} from "../core/helpers";', ""]
    defs = []
    for j in range(3):
        name = f"{rng.choice(WORDS)}{rng.choice(WORDS).title()}Ts{i}x{j}"
        defs.append((name, len(lines) + 1))
        lines += [
            f"export function {name}(value: number): number {{",
            f"  return coreHelper{rng.randrange(CORE)}(value) * 2;",
            "}",
            "",
        ]
    iface = f"Shape{i}"
    defs.append((iface, len(lines) + 1))
    lines += [f"export interface {iface} {{ area(): number; }}", ""]
    return "\n".join(lines), defs


def _go(rng: random.Random, i: int) -> tuple[str, list[tuple[str, int]]]:
    lines = [f"package pkg{i % 50}", ""]
    defs = []
    for j in range(3):
        name = f"{rng.choice(WORDS).title()}{rng.choice(WORDS).title()}Go{i}x{j}"
        defs.append((name, len(lines) + 1))
        lines += [
            f"func {name}(v int) int {{",
            f"\treturn CoreHelper{rng.randrange(CORE)}(v)",
            "}",
            "",
        ]
    struct = f"Server{i}"
    defs.append((struct, len(lines) + 1))
    lines += [f"type {struct} struct {{ port int }}", ""]
    return "\n".join(lines), defs


def _rust(rng: random.Random, i: int) -> tuple[str, list[tuple[str, int]]]:
    lines = ["use crate::core::helpers;", ""]
    defs = []
    for j in range(3):
        name = f"{rng.choice(WORDS)}_{rng.choice(WORDS)}_rs_{i}_{j}"
        defs.append((name, len(lines) + 1))
        lines += [
            f"pub fn {name}(v: u32) -> u32 {{",
            f"    core_helper_rs_{rng.randrange(CORE)}(v)",
            "}",
            "",
        ]
    struct = f"Point{i}"
    defs.append((struct, len(lines) + 1))
    lines += [f"pub struct {struct} {{ x: u32 }}", ""]
    return "\n".join(lines), defs


_MAKERS = (("py", _python, 4), ("ts", _typescript, 3), ("go", _go, 2), ("rs", _rust, 1))


def generate(root: Path, files: int, seed: int) -> dict[str, tuple[str, int]]:
    """The repository, and its ground truth: name → (path, line) of its definition."""
    rng = random.Random(seed)
    truth: dict[str, tuple[str, int]] = {}
    weighted = [m for m in _MAKERS for _ in range(m[2])]
    core = root / "core"
    core.mkdir(parents=True)
    (core / "helpers.py").write_text(
        "".join(f"def core_helper_{k}(value):\n    return value\n\n" for k in range(CORE))
    )
    for i in range(files):
        ext, make, _ = weighted[i % len(weighted)]
        text, defs = make(rng, i)
        rel = f"{ext}/mod{i // 500:03d}/file_{i}.{ext}"
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        for name, line in defs:
            truth.setdefault(name, (rel, line))
    for args in (("init", "-q", "-b", "main"), ("add", "-A")):
        subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)
    subprocess.run(
        ["git", "-C", str(root), "-c", "user.email=b@x", "-c", "user.name=b", "commit", "-qm", "g"],
        check=True,
        capture_output=True,
    )
    return truth


def _proc(pid: int) -> tuple[int, float]:
    """RSS in bytes and CPU seconds (user + system) of `pid`."""
    rss = 0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1]) * 1024
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return rss, (int(fields[11]) + int(fields[12])) / ticks


def _stats(server: ServerProcess, repo: Path) -> dict[str, object]:
    return dict(server.request("GET", "/stats", params={"cwd": str(repo)}).json())


def background_pass(server: ServerProcess, repo: Path) -> dict[str, object]:
    assert server.proc is not None
    pid = server.proc.pid
    rss0, cpu0 = _proc(pid)
    started = time.monotonic()
    server.request("POST", "/clear", json={"cwd": str(repo)}).raise_for_status()
    peak = rss0
    while True:
        index = _stats(server, repo)["symbol_index"]
        rss, _ = _proc(pid)
        peak = max(peak, rss)
        if isinstance(index, dict) and index["complete"]:
            break
        time.sleep(0.2)  # sampling RSS while the pass runs: there is no event for "a bit later"
    wall = time.monotonic() - started
    rss1, cpu1 = _proc(pid)
    print(
        f"background pass: {index['files_indexed']}/{index['files_total']} files, "
        f"{index['definitions']} definitions, languages {index['languages']}"
    )
    print(
        f"  index time {wall:.1f} s wall, server CPU {cpu1 - cpu0:.1f} s "
        f"({100 * (cpu1 - cpu0) / max(wall, 1e-9):.0f} % of one core; cap "
        f"{100 * C.INDEX_CPU_SHARE:.0f} % for the index thread)"
    )
    print(
        f"  server RSS {rss0 / 2**20:.0f} MiB before, {peak / 2**20:.0f} MiB peak, "
        f"{rss1 / 2**20:.0f} MiB after (+{(peak - rss0) / 2**20:.0f} MiB)"
    )
    return dict(index)


def index_in_process(data_dir: Path, repo: Path) -> None:
    """The background pass at full speed in this process (for --updates-only)."""
    (data_dir / "index").mkdir(parents=True)
    store = SymbolStore(data_dir / "index" / "bench.sqlite3")
    index = WorkspaceIndex(repo, store, secret_patterns=tuple(C.DEFAULT_SECRET_PATH_PATTERNS))
    started = time.monotonic()
    for _ in index.background_pass():
        pass
    print(f"indexed {store.file_count()} files in process in {time.monotonic() - started:.0f} s")
    store.close()


def incremental(data_dir: Path, repo: Path, edits: int, seed: int) -> None:
    db = next((data_dir / "index").glob("*.sqlite3"))
    store = SymbolStore(db)
    index = WorkspaceIndex(repo, store, secret_patterns=tuple(C.DEFAULT_SECRET_PATH_PATTERNS))
    rng = random.Random(seed)
    paths = sorted(p for p in store.stamps() if not p.startswith("core/"))
    cold = {}
    for ext in ("py", "ts", "go", "rs"):  # the grammar's one-time load, once per process
        sample = next(p for p in paths if p.endswith(f".{ext}"))
        started = time.perf_counter()
        index.update(sample, (repo / sample).read_bytes() + b"\n")
        cold[ext] = round((time.perf_counter() - started) * 1000, 1)
    print(f"first update per language (grammar load, once per process), ms: {cold}")
    times, cpu, checkpoints = [], [], []
    for rel in rng.sample(paths, min(edits, len(paths))):
        path = repo / rel
        path.write_text("\n\n" + path.read_text())
        started, thread_cpu = time.perf_counter(), time.thread_time()
        changed = index.update(rel)
        times.append((time.perf_counter() - started) * 1000)
        cpu.append((time.thread_time() - thread_cpu) * 1000)
        assert changed, rel
        # As the index thread does once its queue is empty: the WAL checkpoint runs between
        # updates, never inside one (timed apart).
        started = time.perf_counter()
        if store.checkpoint(C.INDEX_WAL_IDLE_CHECKPOINT_WRITES):
            checkpoints.append((time.perf_counter() - started) * 1000)
    store.close()
    times.sort()
    cpu.sort()
    print(
        f"incremental update ({len(times)} edited files): p50 {statistics.median(times):.1f} ms, "
        f"p95 {times[int(len(times) * 0.95) - 1]:.1f} ms, max {times[-1]:.1f} ms (target < 50 ms); "
        f"thread CPU p50 {statistics.median(cpu):.1f} ms, max {cpu[-1]:.1f} ms"
    )
    if checkpoints:
        print(
            f"  idle WAL checkpoints between updates: {len(checkpoints)}, "
            f"max {max(checkpoints):.1f} ms (off the update path)"
        )


def first_prompts(  # noqa: PLR0917 (a benchmark step: its inputs, spelled out)
    server: ServerProcess,
    fake: FakeProvider,
    repo: Path,
    truth: dict[str, tuple[str, int]],
    questions: int,
    seed: int,
) -> None:
    rng = random.Random(seed)
    names = rng.sample(sorted(truth), min(questions, len(truth)))
    fake.responder = lambda recorded: Text("Defined where the index says.")
    hits = tool_calls = reasks = 0
    for name in names:
        path, line = truth[name]
        before = len(fake.requests)
        reply = server.request(
            "POST", "/api/ask", json={"question": f"Where is `{name}` defined?", "cwd": str(repo)}
        )
        reply.raise_for_status()
        body = reply.json()
        tool_calls += int(body.get("tool_calls", 0) or 0)
        made = fake.requests[before:]
        reasks += len(made) > 1
        if f"{path}:{line} " in json.dumps(made[0].body):
            hits += 1
    share = 100.0 * hits / len(names)
    print(
        f"first prompt holds the right path:line for {hits}/{len(names)} = {share:.1f} % "
        f"(target >= 90 %); model tool calls {tool_calls}; questions re-asked {reasks}"
    )
    stats = _stats(server, repo)
    print(f"  window after: {stats['context']}")


def truth_from_index(
    data_dir: Path, repo: Path, limit: int, seed: int
) -> dict[str, tuple[str, int]]:
    """For a real repository: unique names from the index, each checked against the file."""
    store = SymbolStore(next((data_dir / "index").glob("*.sqlite3")))
    with store._read() as db:  # a read-only peek for the benchmark
        rows = db.execute(
            "SELECT name, path, line FROM defs WHERE kind IN ('function','class','method') "
            "AND length(name) > 3 GROUP BY name HAVING COUNT(*) = 1"
        ).fetchall()
    store.close()
    rng = random.Random(seed)
    truth = {}
    for name, path, line in rng.sample(rows, min(limit * 3, len(rows))):
        text = (repo / path).read_text(errors="replace").splitlines()
        if line <= len(text) and name in text[line - 1]:
            truth[name] = (path, line)
        if len(truth) >= limit:
            break
    return truth


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--repo", type=Path, help="a real checkout instead of a generated repo")
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--edits", type=int, default=100)
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument(
        "--updates-only",
        action="store_true",
        help="only step 2: index the generated repo in process (no server), then the edits",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="symbol-bench-") as tmp, FakeProvider() as fake:
        base = Path(tmp)
        if args.repo:
            repo = args.repo.resolve()
            truth: dict[str, tuple[str, int]] = {}
            print(f"repository {repo}")
        else:
            started = time.monotonic()
            repo = base / "repo"
            truth = generate(repo, args.files, args.seed)
            print(f"generated {args.files} source files in {time.monotonic() - started:.0f} s")
        data = base / "data"
        if args.updates_only:
            index_in_process(data, repo)
            incremental(data, repo, args.edits, args.seed)
            return
        env = {
            "ANTHROPIC_API_KEY": "dummy",
            "ANTHROPIC_BASE_URL": fake.anthropic_base_url,
            "LIVE_MEMORY_MAX_CONTEXT_TOKENS": "400000",
        }
        with ServerProcess(data, env) as server:
            background_pass(server, repo)
            if args.repo:
                truth = truth_from_index(data, repo, args.questions, args.seed)
            first_prompts(server, fake, repo, truth, args.questions, args.seed)
        if not args.repo:
            incremental(data, repo, args.edits, args.seed)


if __name__ == "__main__":
    main()
