"""Chart geometry for the dashboard's inline SVG: plain numbers in, rectangles and marks out.

Rendered server-side (the templates draw what these return), so the page needs no chart
library and no script.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta

__all__ = ["Bar", "Mark", "Rect", "day_bars", "window_bar"]

BAR_WIDTH = 800.0
CHART_HEIGHT = 120.0

WINDOW_SEGMENTS = (
    ("stable", "stable prefix"),
    ("frozen", "frozen block"),
    ("history", "history"),
    ("last_turn", "last turn"),
)


@dataclass(frozen=True, slots=True)
class Rect:
    key: str
    label: str
    tokens: int
    x: float
    width: float


@dataclass(frozen=True, slots=True)
class Mark:
    label: str
    tokens: int
    x: float


@dataclass(frozen=True, slots=True)
class Bar:
    """One day: its stacked token rectangles (bottom up) and its cost bar."""

    day: str
    x: float
    width: float
    parts: tuple[tuple[str, int, float, float], ...]
    """(kind, tokens, y, height) for cache_read, uncached input and output."""
    tokens: int
    cost_usd: float
    cost_y: float
    cost_height: float


def window_bar(layout: Mapping[str, int]) -> tuple[list[Rect], list[Mark], float]:
    """The window as a stacked bar on a scale that fits its whole context (or its content,
    if that is larger): segments, the floor and threshold marks, and the scale's tokens."""
    used = sum(int(layout.get(key, 0)) for key, _ in WINDOW_SEGMENTS)
    scale = float(max(int(layout.get("max_tokens", 0)), used, 1))
    rects: list[Rect] = []
    x = 0.0
    for key, label in WINDOW_SEGMENTS:
        tokens = int(layout.get(key, 0))
        width = BAR_WIDTH * tokens / scale
        rects.append(Rect(key, label, tokens, round(x, 2), round(width, 2)))
        x += width
    marks = [
        Mark(label, int(layout.get(key, 0)), round(BAR_WIDTH * int(layout.get(key, 0)) / scale, 2))
        for key, label in (("floor_tokens", "floor"), ("threshold_tokens", "compaction threshold"))
    ]
    return rects, marks, scale


def day_bars(rows: Sequence[Mapping[str, object]], days: int, today: date) -> list[Bar]:
    """One bar per calendar day of the last `days` (oldest first), empty days included."""
    by_day = {str(row.get("day")): row for row in rows}
    span = [(today - timedelta(days=days - 1 - i)).isoformat() for i in range(days)]

    def number(row: Mapping[str, object] | None, key: str) -> float:
        value = row.get(key, 0) if row is not None else 0
        return float(value) if isinstance(value, int | float) else 0.0

    totals = [number(by_day.get(d), "input") + number(by_day.get(d), "output") for d in span]
    costs = [number(by_day.get(d), "cost_usd") for d in span]
    top_tokens, top_cost = max([*totals, 1.0]), max([*costs, 1e-9])
    slot = BAR_WIDTH / days
    bars: list[Bar] = []
    for i, day in enumerate(span):
        row = by_day.get(day)
        cached = number(row, "cache_read")
        kinds = (
            ("cache_read", cached),
            ("uncached", max(number(row, "input") - cached, 0.0)),
            ("output", number(row, "output")),
        )
        parts: list[tuple[str, int, float, float]] = []
        y = CHART_HEIGHT
        for kind, tokens in kinds:
            height = CHART_HEIGHT * tokens / top_tokens
            y -= height
            parts.append((kind, int(tokens), round(y, 2), round(height, 2)))
        cost_height = CHART_HEIGHT * costs[i] / top_cost
        bars.append(
            Bar(
                day,
                round(i * slot + slot * 0.15, 2),
                round(slot * 0.7, 2),
                tuple(parts),
                int(totals[i]),
                round(costs[i], 6),
                round(CHART_HEIGHT - cost_height, 2),
                round(cost_height, 2),
            )
        )
    return bars
