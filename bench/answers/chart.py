"""The results as a PNG: one panel per figure, one bar per arm, its 95 % interval as a whisker.

Written with the standard library alone (zlib + struct and a 3x5 pixel font), so the benchmark
needs no plotting package: the markdown table carries the exact numbers, the chart the shape.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence
from pathlib import Path

from bench.answers.summary import ArmSummary

__all__ = ["write_chart"]

_FONT = {  # 3x5 glyphs, rows top to bottom, "#" = ink
    "0": "###|#.#|#.#|#.#|###",
    "1": ".#.|##.|.#.|.#.|###",
    "2": "###|..#|###|#..|###",
    "3": "###|..#|.##|..#|###",
    "4": "#.#|#.#|###|..#|..#",
    "5": "###|#..|###|..#|###",
    "6": "###|#..|###|#.#|###",
    "7": "###|..#|.#.|.#.|.#.",
    "8": "###|#.#|###|#.#|###",
    "9": "###|#.#|###|..#|###",
    "a": ".#.|#.#|###|#.#|#.#",
    "b": "##.|#.#|##.|#.#|##.",
    "c": ".##|#..|#..|#..|.##",
    "d": "##.|#.#|#.#|#.#|##.",
    "e": "###|#..|##.|#..|###",
    "f": "###|#..|##.|#..|#..",
    "g": ".##|#..|#.#|#.#|.##",
    "h": "#.#|#.#|###|#.#|#.#",
    "i": "###|.#.|.#.|.#.|###",
    "j": "..#|..#|..#|#.#|.#.",
    "k": "#.#|#.#|##.|#.#|#.#",
    "l": "#..|#..|#..|#..|###",
    "m": "#.#|###|###|#.#|#.#",
    "n": "##.|#.#|#.#|#.#|#.#",
    "o": ".#.|#.#|#.#|#.#|.#.",
    "p": "##.|#.#|##.|#..|#..",
    "q": ".#.|#.#|#.#|##.|.##",
    "r": "##.|#.#|##.|#.#|#.#",
    "s": ".##|#..|.#.|..#|##.",
    "t": "###|.#.|.#.|.#.|.#.",
    "u": "#.#|#.#|#.#|#.#|###",
    "v": "#.#|#.#|#.#|#.#|.#.",
    "w": "#.#|#.#|###|###|#.#",
    "x": "#.#|#.#|.#.|#.#|#.#",
    "y": "#.#|#.#|.#.|.#.|.#.",
    "z": "###|..#|.#.|#..|###",
    "%": "#.#|..#|.#.|#..|#.#",
    "-": "...|...|###|...|...",
    ".": "...|...|...|...|.#.",
    "/": "..#|..#|.#.|#..|#..",
    " ": "...|...|...|...|...",
    "(": ".#.|#..|#..|#..|.#.",
    ")": ".#.|..#|..#|..#|.#.",
    ",": "...|...|...|.#.|#..",
}
_SCALE = 2
_PALETTE = [(66, 133, 244), (219, 68, 55), (244, 180, 0), (15, 157, 88), (171, 71, 188)]
_PANELS = (
    ("key-fact recall %", "recall", True),
    ("citation precision %", "citation_precision", True),
    ("hallucinated negatives %", "hallucination", True),
    ("new prompt tokens per question", "new_prompt_tokens", False),
)


class _Canvas:
    def __init__(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        self.rows = [bytearray(b"\xff" * (3 * width)) for _ in range(height)]

    def rect(self, x0: int, y0: int, x1: int, y1: int, color: tuple[int, int, int]) -> None:
        for y in range(max(0, y0), min(self.height, y1)):
            row = self.rows[y]
            for x in range(max(0, x0), min(self.width, x1)):
                row[3 * x : 3 * x + 3] = bytes(color)

    def text(self, x: int, y: int, text: str, color: tuple[int, int, int] = (0, 0, 0)) -> None:
        for char in text.lower():
            glyph = _FONT.get(char, _FONT[" "]).split("|")
            for dy, line in enumerate(glyph):
                for dx, ink in enumerate(line):
                    if ink == "#":
                        px, py = x + dx * _SCALE, y + dy * _SCALE
                        self.rect(px, py, px + _SCALE, py + _SCALE, color)
            x += 4 * _SCALE

    def png(self) -> bytes:
        raw = b"".join(b"\x00" + bytes(row) for row in self.rows)

        def chunk(kind: bytes, data: bytes) -> bytes:
            body = kind + data
            return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

        header = struct.pack(">IIBBBBB", self.width, self.height, 8, 2, 0, 0, 0)
        return (
            b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(raw, 9))
            + chunk(b"IEND", b"")
        )


def write_chart(summaries: Sequence[ArmSummary], path: Path, title: str) -> Path:
    """Draw the panels for `summaries` into a PNG at `path`."""
    bar_h, gap, label_w, bar_w = 14, 6, 110, 300
    panel_h = 24 + len(summaries) * (bar_h + gap)
    canvas = _Canvas(label_w + bar_w + 90, 30 + len(_PANELS) * (panel_h + 12))
    canvas.text(8, 8, title[:70])
    y = 30
    for heading, name, pct in _PANELS:
        canvas.text(8, y, heading)
        values = [s.values.get(name) for s in summaries]
        highs = [iv[1] for s in summaries if (iv := s.intervals.get(name)) is not None]
        top = 1.0 if pct else max([v for v in values if v] + highs + [1.0])
        for i, summary in enumerate(summaries):
            by = y + 20 + i * (bar_h + gap)
            canvas.text(8, by + 2, summary.arm[:13])
            value = summary.values.get(name)
            if value is None:
                canvas.text(label_w, by + 2, "n/a", (120, 120, 120))
                continue
            color = _PALETTE[i % len(_PALETTE)]
            canvas.rect(
                label_w, by, label_w + max(1, round(bar_w * value / top)), by + bar_h, color
            )
            interval = summary.intervals.get(name)
            if interval is not None:
                lo, hi = (label_w + round(bar_w * v / top) for v in interval)
                canvas.rect(lo, by + bar_h // 2 - 1, hi + 1, by + bar_h // 2 + 1, (0, 0, 0))
            shown = f"{100 * value:.0f}%" if pct else f"{value:.0f}"
            canvas.text(label_w + bar_w + 8, by + 2, shown)
        y += panel_h + 12
    path.write_bytes(canvas.png())
    return path
