"""The arms: the same questions, the same model, the same agent loop, different memory.

- `no-memory`: the workspace is cleared (`POST /clear`) before every question, so each answer
  is an agent exploring by itself with Live Memory's tools;
- `cold`: one session from an empty memory, the questions in a row;
- `warm`: first the files a recorded agent session read (the question set's `session_reads`)
  are teed through `POST /notify` with their content, as the plugin's hooks do;
- `restart`: as warm, then the server is stopped and started again on the same data dir;
- `compaction`: as warm, under a small window (`LIVE_MEMORY_MAX_CONTEXT_TOKENS`).

Per seed the questions are shuffled; freshness items come last: the harness applies the change
to the work copy, notifies it as the hooks would (the watcher sees it too), asks, scores against
the changed tree, then restores the pinned commit and notifies again. Every question goes over
REST (`POST /api/ask`): prompt tokens and the KV-cache reads come from the answer, provider
calls from the endpoint.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx

from bench.answers.question_set import Question, QuestionSet
from bench.answers.repo import apply_change, undo_change, work_copy
from bench.answers.score import score_answer
from bench.answers.summary import Record
from tests.support.app_server import AppServer

__all__ = ["ARMS", "Endpoint", "Options", "run_benchmark"]

ARMS = ("no-memory", "cold", "warm", "restart", "compaction")
_TEED_ARMS = frozenset({"warm", "restart", "compaction"})
INDEX_WAIT_S = 120.0
_POLL_S = 0.2


@dataclass(frozen=True, slots=True)
class Endpoint:
    """The model server the app is pointed at."""

    base_url: str
    model: str
    calls: Callable[[], int] | None
    """Chat requests the server has answered so far (read before and after a question); None:
    the app's own count (`/stats` `endpoint_facts.speed.samples`, every call llama.cpp timed)."""
    fresh: Callable[[], None]
    """Empty the server's KV cache: each arm starts as cold at the server as in the app."""
    env: Mapping[str, str]
    """Extra settings for the app (a CPU model's longer time budget)."""


@dataclass(frozen=True, slots=True)
class Options:
    arms: Sequence[str]
    seeds: Sequence[int]
    workdir: Path
    limit: int | None = None
    compaction_tokens: int = 4096
    ask_timeout_s: float = 120.0


def _wait_for_index(server: AppServer, repo: Path) -> None:
    """Ask once the structural index has read the workspace (bounded: a huge tree goes on)."""
    stop = time.monotonic() + INDEX_WAIT_S
    while time.monotonic() < stop:
        body = server.request("GET", "/stats", params={"cwd": str(repo)}).json()
        index = body.get("symbol_index")
        if not isinstance(index, dict) or index.get("complete"):
            return
        time.sleep(_POLL_S)


def _speed_samples(server: AppServer, repo: Path) -> int:
    reply = server.request("GET", "/stats", params={"cwd": str(repo)})
    facts = reply.json().get("endpoint_facts") if reply.status_code == 200 else None
    speed = facts.get("speed") if isinstance(facts, dict) else None
    return int(speed.get("samples") or 0) if isinstance(speed, dict) else 0


def _notify(server: AppServer, repo: Path, events: list[dict[str, str]]) -> None:
    if events:
        reply = server.request("POST", "/notify", json={"cwd": str(repo), "events": events})
        reply.raise_for_status()


def _tee_session_reads(server: AppServer, repo: Path, paths: Sequence[str]) -> None:
    """The hooks' PostToolUse for Read: path and content, one notification per file."""
    for relative in paths:
        path = repo / relative
        content = path.read_text(encoding="utf-8", errors="replace")
        _notify(server, repo, [{"path": str(path), "kind": "read", "content": content}])


def _order(question_set: QuestionSet, seed: int, limit: int | None) -> list[Question]:
    rng = random.Random(seed)
    plain = [q for q in question_set.questions if q.change is None]
    fresh = [q for q in question_set.questions if q.change is not None]
    rng.shuffle(plain)
    rng.shuffle(fresh)
    if limit is None:
        return plain + fresh
    keep_fresh = min(len(fresh), limit // 2)  # a smoke run: half its questions freshness items
    return plain[: limit - keep_fresh] + fresh[:keep_fresh]


def _reader(repo: Path) -> Callable[[str], str | None]:
    def read(relative: str) -> str | None:
        path = repo / relative
        return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None

    return read


@dataclass(frozen=True, slots=True)
class _Arm:
    """One arm of one question set with one seed."""

    question_set: QuestionSet
    arm: str
    seed: int
    endpoint: Endpoint
    options: Options

    def env(self) -> dict[str, str]:
        env = {
            "LIVE_MEMORY_PROVIDER": "openai",
            "LIVE_MEMORY_BASE_URL": self.endpoint.base_url,
            "LIVE_MEMORY_MODEL": self.endpoint.model,
            **self.endpoint.env,
        }
        if self.arm == "compaction":
            env["LIVE_MEMORY_MAX_CONTEXT_TOKENS"] = str(self.options.compaction_tokens)
        return env

    def run(self, source: Path, progress: Callable[[str], None]) -> list[Record]:
        name, options = self.question_set.name, self.options
        data = options.workdir / f"{name}-{self.arm}-{self.seed}" / "data"
        repo = work_copy(source, self.question_set.commit, options.workdir / f"repo-{name}")
        self.endpoint.fresh()
        records: list[Record] = []
        server = AppServer(data, self.env()).start()
        try:
            server.request("POST", "/reset", json={"cwd": str(repo)})  # opens the workspace
            _wait_for_index(server, repo)
            if self.arm in _TEED_ARMS:
                _tee_session_reads(server, repo, self.question_set.session_reads)
            if self.arm == "restart":  # same data dir: what the snapshot kept is all there is
                server.stop()
                server = AppServer(data, self.env()).start()
                _wait_for_index(server, repo)
            for index, question in enumerate(_order(self.question_set, self.seed, options.limit)):
                if self.arm == "no-memory" and index:
                    server.request("POST", "/clear", json={"cwd": str(repo)}).raise_for_status()
                record = self.ask_with_change(server, repo, question)
                records.append(record)
                progress(
                    f"{name} {self.arm} seed={self.seed} {question.id}: recall "
                    f"{record.recalled}/{record.facts} calls={record.provider_calls} "
                    f"new={record.new_prompt_tokens} {record.wall_s:.1f}s"
                )
        finally:
            server.stop()
        return records

    def ask_with_change(self, server: AppServer, repo: Path, question: Question) -> Record:
        """Apply a freshness item's change and notify it as the hooks would, ask, score against
        the changed tree, then restore the pinned commit and notify again."""
        change = question.change
        if change is None:
            return self.ask(server, repo, question)
        changed = apply_change(repo, change)
        kind = "unlink" if change.kind == "delete" else "change"
        _notify(server, repo, [{"path": str(p), "kind": kind} for p in changed])
        try:
            return self.ask(server, repo, question)
        finally:
            restored = undo_change(repo, self.question_set.commit, change)
            kind = "add" if change.kind == "delete" else "change"
            _notify(server, repo, [{"path": str(p), "kind": kind} for p in restored])

    def ask(self, server: AppServer, repo: Path, question: Question) -> Record:
        calls = self.endpoint.calls or (lambda: _speed_samples(server, repo))
        calls_before = calls()
        started = time.monotonic()
        try:
            reply = httpx.post(
                f"{server.url}/api/ask",
                json={"question": question.question, "cwd": str(repo)},
                timeout=self.options.ask_timeout_s,
            )
            body = reply.json() if reply.status_code == 200 else {}
        except httpx.TimeoutException:
            body = {}
        wall = time.monotonic() - started
        text = str(body.get("answer") or "")
        tokens = body.get("tokens") or {}
        prompt = int(tokens.get("input", 0))
        reused = int(tokens.get("cache_read", 0))
        score = score_answer(
            question, text, sources=body.get("sources"), read=_reader(repo), root=str(repo)
        )
        return Record(
            question_set=self.question_set.name,
            arm=self.arm,
            seed=self.seed,
            qid=question.id,
            kind=question.kind,
            facts=score.facts,
            recalled=score.recalled,
            citations=score.citations,
            precise_citations=score.precise_citations,
            expects_absence=question.expects_absence,
            hallucinated=score.hallucinated,
            freshness=question.change is not None,
            stale=score.stale,
            provider_calls=calls() - calls_before,
            prompt_tokens=prompt,
            new_prompt_tokens=max(0, prompt - reused),
            wall_s=round(wall, 3),
            timed_out=not body or bool(body.get("timed_out")),
            answer=text,
        )


def run_benchmark(
    sets: Sequence[tuple[QuestionSet, Path]],
    endpoint: Endpoint,
    options: Options,
    progress: Callable[[str], None] = lambda _: None,
) -> list[Record]:
    """Every (question set, seed, arm), in that order; the records of every question asked."""
    unknown = set(options.arms) - set(ARMS)
    if unknown:
        raise ValueError(f"unknown arms {sorted(unknown)}; choose from {list(ARMS)}")
    records: list[Record] = []
    for question_set, source in sets:
        for seed in options.seeds:
            for arm in options.arms:
                records += _Arm(question_set, arm, seed, endpoint, options).run(source, progress)
    return records
