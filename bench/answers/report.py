"""The results directory: every scored record, the tables with the commands that made them, and
the chart."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from bench.answers.chart import write_chart
from bench.answers.summary import Record, markdown_table, summarize

__all__ = ["write_report"]


def write_report(
    records: Sequence[Record], arms: Sequence[str], out: Path, header: Sequence[str]
) -> Path:
    """Write records.jsonl, results.md (header lines, then one table per question set and one
    over all) and chart.png under `out`; the path of results.md."""
    out.mkdir(parents=True, exist_ok=True)
    with (out / "records.jsonl").open("w", encoding="utf-8") as stream:
        for record in records:
            stream.write(json.dumps(record.to_json()) + "\n")
    parts = ["# Answer benchmark", "", *header, ""]
    names = list(dict.fromkeys(r.question_set for r in records))
    for name in [*names, "all"] if len(names) > 1 else names:
        mine = records if name == "all" else [r for r in records if r.question_set == name]
        parts += [f"## {name}", "", markdown_table(summarize(mine, arms))]
    parts += [
        "Brackets: 95 % bootstrap intervals over the question records of every seed. New prompt",
        "tokens: prompt tokens the model server evaluated anew (not from its KV cache).",
        "",
        "![chart](chart.png)",
        "",
    ]
    results = out / "results.md"
    results.write_text("\n".join(parts), encoding="utf-8")
    write_chart(summarize(records, arms), out / "chart.png", "answer benchmark, all sets")
    return results
