"""Memory that stays true: how fast an external edit of a held file reaches the next prompt,
and what a storm of edits costs the workspace actor.

    python bench/freshness.py [--repo PATH] [--edits 20] [--storm 1000]

1. Edit -> prompt, through the real server (in this process, real HTTP on loopback) with the
   scripted fake provider, on a git checkout (a temp clone of `--repo` or of
   LIVE_MEMORY_BENCH_REPO, else a generated repo): hold `--files` source files (teed reads),
   then `--edits` times edit one of them outside any agent and time (a) until the server
   reports the re-read applied (/stats freshness), (b) until the next question's prompt (at
   the fake provider) holds the new line, for the FileChanged hook path and the OS watcher alone.
2. Storm, in the pure core (no threads, the actor's own work): `--storm` change events to one
   held file and spread over every held file, as one /notify batch each; the actor's time
   with re-reads (claim + coalesce; the reads run off the actor, timed apart) against the
   previous behaviour (every change hashed from disk on the actor, then marked stale).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import _repo_root  # noqa: F401 (puts the repository root on sys.path for tests.support)

from live_memory.actors.rereader import read_batch
from live_memory.config import constants as C
from live_memory.memory import Ingestor
from live_memory.workspace import FileEvent, ReadFiles, WorkspaceState
from tests.support.app_server import AppServer
from tests.support.fakes import FakeProvider, Text
from tests.workspace.support import LIMITS


def _checkout(target: Path, repo: str | None) -> Path:
    named = repo or os.environ.get("LIVE_MEMORY_BENCH_REPO")
    if named and Path(named).exists():
        source = Path(named)
        subprocess.run(["git", "clone", "-q", str(source), str(target)], check=True)
        return target
    target.mkdir(parents=True)  # no checkout named: a generated repository of the same shape
    for i in range(200):
        (target / f"pkg/mod_{i}.py").parent.mkdir(parents=True, exist_ok=True)
        (target / f"pkg/mod_{i}.py").write_text(f"def f_{i}():\n    return {i}\n" * 40)
    subprocess.run(["git", "init", "-q", str(target)], check=True)
    return target


def _held_files(repo: Path, count: int) -> list[str]:
    files = [
        p.relative_to(repo).as_posix()
        for p in sorted(repo.rglob("*.py"))
        if ".git" not in p.parts and 2_000 < p.stat().st_size < 16_000
    ]
    return files[:count]


def _freshness(server: AppServer, repo: Path) -> dict[str, int]:
    stats = server.request("GET", "/stats", params={"cwd": str(repo)}).json()
    return dict(stats["freshness"])


def edit_to_prompt(repo: Path, files: list[str], edits: int, watcher_only: bool) -> None:
    fake = FakeProvider()
    with fake:
        fake.responder = lambda recorded: Text("ok")
        env = {
            "ANTHROPIC_API_KEY": "dummy-key",
            "ANTHROPIC_BASE_URL": fake.anthropic_base_url,
            "LIVE_MEMORY_WATCHER": "os",
        }
        with AppServer(Path(tempfile.mkdtemp(prefix="lm-fresh-bench-")), env) as server:
            server.request("POST", "/clear", json={"cwd": str(repo)}).raise_for_status()
            events = [{"path": f, "kind": "read", "content": (repo / f).read_text()} for f in files]
            server.request("POST", "/notify", json={"cwd": str(repo), "events": events})
            server.request("POST", "/api/ask", json={"question": "warm?", "cwd": str(repo)})
            to_memory, to_prompt, round_trip = [], [], []
            for i in range(edits):
                path = files[i % len(files)]
                marker = f"# live-memory freshness bench edit {i}"
                probe = time.perf_counter()
                before = _freshness(server, repo)["refreshed"]
                round_trip.append(time.perf_counter() - probe)  # the measurement's own floor
                start = time.perf_counter()
                with (repo / path).open("a") as handle:
                    handle.write(f"\n{marker}\n")
                if not watcher_only:
                    hook = {"hook_event_name": "FileChanged", "event": "change"}
                    hook |= {"cwd": str(repo), "file_path": str(repo / path)}
                    server.request("POST", "/notify", json=hook).raise_for_status()
                deadline = start + 30
                while _freshness(server, repo)["refreshed"] <= before:
                    if time.perf_counter() > deadline:
                        raise RuntimeError(f"edit {i} of {path} never re-read")
                    time.sleep(0.002)  # polling the server's view: there is no event to wait on
                to_memory.append(time.perf_counter() - start)
                reply = server.request(
                    "POST", "/api/ask", json={"question": f"edit {i}?", "cwd": str(repo)}
                )
                reply.raise_for_status()
                to_prompt.append(time.perf_counter() - start)
                if marker not in json.dumps(fake.requests[-1].body):
                    raise RuntimeError(f"edit {i} not in the next prompt")
                if "tool_use" in json.dumps(fake.requests[-1].body.get("messages", [])[-1:]):
                    raise RuntimeError("a tool call was needed")
            fresh = _freshness(server, repo)
    path_name = "OS watcher only" if watcher_only else "FileChanged hook (+ watcher)"
    print(f"edit -> prompt via {path_name}, {edits} edits of {len(files)} held files:")
    rows = (
        ("edit -> re-read applied", to_memory),
        ("edit -> answer", to_prompt),
        ("(one /stats round trip)", round_trip),
    )
    for name, values in rows:
        ms = sorted(v * 1000 for v in values)
        print(
            f"  {name:24} median {statistics.median(ms):7.1f} ms  "
            f"p90 {ms[int(len(ms) * 0.9) - 1]:7.1f} ms  max {ms[-1]:7.1f} ms"
        )
    print(f"  server counters: {fresh}")


def _state(repo: Path, files: list[str]) -> WorkspaceState:
    state = WorkspaceState(str(repo), Ingestor(repo, max_held_bytes=None), LIMITS, 0.0)
    state.window.freeze()
    events = tuple(FileEvent(f, "read", (repo / f).read_text()) for f in files)
    state.notify(events, 0.0)
    state.window.sync_deltas()
    return state


def storm(repo: Path, files: list[str], size: int) -> None:
    print(f"storm of {size} change events (one /notify batch), {len(files)} held files:")
    for label, targets in (("one file", files[:1]), ("all held files", files)):
        batch = tuple(
            FileEvent(str(repo / targets[i % len(targets)]), "change") for i in range(size)
        )
        state = _state(repo, files)
        start = time.perf_counter()
        state.notify(batch, 1.0)
        effects = state.rereads_due(1.0)
        claim_s = time.perf_counter() - start
        read_s = apply_s = 0.0
        batches = reads = 0
        now = 1.0
        while effects:
            (effect,) = effects
            assert isinstance(effect, ReadFiles)
            batches, reads = batches + 1, reads + len(effect.paths)
            t0 = time.perf_counter()
            results = read_batch(
                repo, effect, max_bytes=C.PASSIVE_MAX_FILE_BYTES, secret_patterns=()
            )
            t1 = time.perf_counter()
            now = max(now, effect.not_before)
            effects = state.reread_done(results, now)
            read_s += t1 - t0
            apply_s += time.perf_counter() - t1
        paced_s = now - 1.0
        old = _state(repo, files)
        start = time.perf_counter()
        for event in batch:  # the previous path: hash from disk on the actor, mark stale
            old.ingestor.apply(old.window, event.path, event.kind, None)
        old_s = time.perf_counter() - start
        print(
            f"  {label:15} actor: claim {claim_s * 1000:6.1f} ms + apply {apply_s * 1000:5.1f} ms"
            f" | reads off the actor: {reads} in {batches} batch(es), {read_s * 1000:5.1f} ms,"
            f" paced over {paced_s:.0f} s | before (hash on the actor): {old_s * 1000:6.1f} ms"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--repo", help="a git repository to clone (default: LIVE_MEMORY_BENCH_REPO, else generated)"
    )
    parser.add_argument(
        "--files", type=int, default=10, help="held files (within the held-bytes cap)"
    )
    parser.add_argument("--edits", type=int, default=20)
    parser.add_argument("--storm", type=int, default=1000)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="lm-fresh-repo-"))
    try:
        repo = _checkout(work / "repo", args.repo)
        files = _held_files(repo, args.files)
        named = args.repo or os.environ.get("LIVE_MEMORY_BENCH_REPO", "generated")
        print(f"repository {named} ({len(files)} held files)")
        storm(repo, files, args.storm)
        edit_to_prompt(repo, files, args.edits, watcher_only=False)
        edit_to_prompt(repo, files, args.edits, watcher_only=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
