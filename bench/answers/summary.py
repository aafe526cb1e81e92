"""Per-arm figures over every question and seed, with bootstrap confidence intervals, and the
markdown table they are published in."""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

__all__ = ["METRICS", "ArmSummary", "Record", "markdown_table", "percentile", "summarize"]

BOOTSTRAP_SAMPLES = 1000
CONFIDENCE = 0.95


@dataclass(frozen=True, slots=True)
class Record:
    """One question asked in one arm with one seed, scored."""

    question_set: str
    arm: str
    seed: int
    qid: str
    kind: str
    facts: int
    recalled: int
    citations: int
    precise_citations: int
    expects_absence: bool
    hallucinated: bool
    freshness: bool
    stale: bool
    provider_calls: int
    prompt_tokens: int
    new_prompt_tokens: int
    """Prompt tokens the server evaluated anew (not served from its KV cache)."""
    wall_s: float
    timed_out: bool
    answer: str

    def to_json(self) -> dict[str, object]:
        return asdict(self)


Metric = Callable[[Sequence[Record]], float | None]


def _ratio(num: Callable[[Record], float], den: Callable[[Record], float]) -> Metric:
    def metric(records: Sequence[Record]) -> float | None:
        total = sum(den(r) for r in records)
        return sum(num(r) for r in records) / total if total else None

    return metric


def _mean(value: Callable[[Record], float], keep: Callable[[Record], bool]) -> Metric:
    def metric(records: Sequence[Record]) -> float | None:
        kept = [value(r) for r in records if keep(r)]
        return sum(kept) / len(kept) if kept else None

    return metric


def percentile(values: Sequence[float], share: float) -> float:
    """Nearest-rank percentile (`share` in 0..1) of a non-empty sequence."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(share * len(ordered)) - 1))]


def _everyone(_: Record) -> bool:
    return True


METRICS: dict[str, Metric] = {
    "recall": _ratio(lambda r: r.recalled, lambda r: r.facts),
    "citation_precision": _ratio(lambda r: r.precise_citations, lambda r: r.citations),
    "hallucination": _mean(lambda r: float(r.hallucinated), lambda r: r.expects_absence),
    "staleness": _mean(lambda r: float(r.stale), lambda r: r.freshness),
    "calls": _mean(lambda r: r.provider_calls, _everyone),
    "prompt_tokens": _mean(lambda r: r.prompt_tokens, _everyone),
    "new_prompt_tokens": _mean(lambda r: r.new_prompt_tokens, _everyone),
    "wall_p50": lambda rs: percentile([r.wall_s for r in rs], 0.5) if rs else None,
    "wall_p95": lambda rs: percentile([r.wall_s for r in rs], 0.95) if rs else None,
}
_WITH_CI = ("recall", "citation_precision", "hallucination", "staleness", "new_prompt_tokens")


@dataclass(frozen=True, slots=True)
class ArmSummary:
    arm: str
    questions: int
    seeds: int
    values: dict[str, float | None]
    intervals: dict[str, tuple[float, float] | None]
    timed_out: int


def _interval(
    metric: Metric, records: Sequence[Record], rng: random.Random
) -> tuple[float, float] | None:
    """Percentile bootstrap over the question records (every seed's records pooled)."""
    draws = []
    for _ in range(BOOTSTRAP_SAMPLES):
        value = metric([records[rng.randrange(len(records))] for _ in records])
        if value is not None:
            draws.append(value)
    if not draws:
        return None
    tail = (1 - CONFIDENCE) / 2
    return percentile(draws, tail), percentile(draws, 1 - tail)


def summarize(records: Sequence[Record], arms: Sequence[str]) -> list[ArmSummary]:
    """One summary per arm, in `arms` order (an arm without records is left out)."""
    rng = random.Random(0)  # the same resamples on every run: reruns compare exactly
    out = []
    for arm in arms:
        mine = [r for r in records if r.arm == arm]
        if not mine:
            continue
        values = {name: metric(mine) for name, metric in METRICS.items()}
        intervals = {name: _interval(METRICS[name], mine, rng) for name in _WITH_CI}
        seeds = len({r.seed for r in mine})
        timed_out = sum(r.timed_out for r in mine)
        out.append(ArmSummary(arm, len(mine), seeds, values, intervals, timed_out))
    return out


def _cell(summary: ArmSummary, name: str, *, pct: bool) -> str:
    value = summary.values.get(name)
    if value is None:
        return "n/a"
    interval = summary.intervals.get(name)
    if pct:
        text = f"{100 * value:.0f} %"
        return f"{text} [{100 * interval[0]:.0f}-{100 * interval[1]:.0f}]" if interval else text
    text = f"{value:,.0f}" if value >= 10 else f"{value:.1f}"
    return f"{text} [{interval[0]:,.0f}-{interval[1]:,.0f}]" if interval else text


def markdown_table(summaries: Sequence[ArmSummary]) -> str:
    """The per-arm table (95 % bootstrap intervals in brackets)."""
    head = (
        "| arm | questions (seeds) | key-fact recall | citation precision | hallucinated "
        "negatives | stale freshness | provider calls/q | prompt tokens/q | new prompt "
        "tokens/q | wall p50 / p95 s | timed out |"
    )
    rows = [head, "|" + "---|" * 11]
    for s in summaries:
        wall = f"{s.values['wall_p50'] or 0:.1f} / {s.values['wall_p95'] or 0:.1f}"
        rows.append(
            f"| {s.arm} | {s.questions} ({s.seeds}) | {_cell(s, 'recall', pct=True)} | "
            f"{_cell(s, 'citation_precision', pct=True)} | {_cell(s, 'hallucination', pct=True)} | "
            f"{_cell(s, 'staleness', pct=True)} | {_cell(s, 'calls', pct=False)} | "
            f"{_cell(s, 'prompt_tokens', pct=False)} | "
            f"{_cell(s, 'new_prompt_tokens', pct=False)} | {wall} | {s.timed_out} |"
        )
    return "\n".join(rows) + "\n"
