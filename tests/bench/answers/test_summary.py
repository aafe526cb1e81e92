"""Per-arm figures, bootstrap intervals, the table and the chart."""

from __future__ import annotations

import struct
import zlib
from dataclasses import replace
from pathlib import Path

from bench.answers.chart import write_chart
from bench.answers.summary import Record, markdown_table, percentile, summarize

BASE = Record(
    question_set="s", arm="warm", seed=1, qid="q", kind="what", facts=1, recalled=1,
    citations=0, precise_citations=0, expects_absence=False, hallucinated=False,
    freshness=False, stale=False, provider_calls=1, prompt_tokens=1000,
    new_prompt_tokens=100, wall_s=1.0, timed_out=False, answer="",
)  # fmt: skip


def test_percentile_is_nearest_rank() -> None:
    assert percentile([1.0, 2.0, 3.0, 4.0], 0.5) == 2.0
    assert percentile([float(n) for n in range(1, 101)], 0.95) == 95.0


def test_recall_and_its_interval_pool_every_seed() -> None:
    records = [
        replace(BASE, seed=seed, qid=str(i), recalled=int(i % 4 != 0), wall_s=float(i))
        for seed in (1, 2, 3)
        for i in range(20)
    ]
    (summary,) = summarize(records, ["warm", "cold"])
    assert summary.seeds == 3 and summary.questions == 60
    assert summary.values["recall"] == 0.75
    low, high = summary.intervals["recall"] or (0.0, 0.0)
    assert low < 0.75 < high
    assert summary.values["hallucination"] is None  # no negatives asked: n/a, not 0
    assert "| warm | 60 (3) | 75 %" in markdown_table([summary])


def test_the_chart_is_a_png_of_the_arms(tmp_path: Path) -> None:
    records = [replace(BASE, arm=arm) for arm in ("no-memory", "warm")]
    path = write_chart(summarize(records, ["no-memory", "warm"]), tmp_path / "c.png", "t")
    data = path.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = struct.unpack(">II", data[16:24])
    idat = data.index(b"IDAT")
    (length,) = struct.unpack(">I", data[idat - 4 : idat])
    pixels = zlib.decompress(data[idat + 4 : idat + 4 + length])
    assert len(pixels) == height * (1 + 3 * width)
    assert pixels.count(b"\x00\x00\x00") > 100  # text and whiskers were drawn
