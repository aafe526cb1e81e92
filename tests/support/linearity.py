"""Checks that a text function's cost grows linearly with its input, by CPU time ratios.

No wall-clock bound: ten calls on n characters are timed against one call on 10 n, so a
linear function comes out near 1 whatever the machine's speed or load (CPU time of this
process only), and a quadratic one near 10. Each side is the best of a few tries.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from functools import partial

__all__ = ["ADVERSARIAL_UNITS", "assert_linear", "cpu_seconds"]

ADVERSARIAL_UNITS = ("a", "A", "_", "1", "a.", "a::", "a/", "a-", "a_", "aA", "Aa", "a1", "1a")
ADVERSARIAL_UNITS += ("a(", "a_é", "aAé", "`a", "a_1", "a.b_", "Ab")
"""Units repeated into one long token: the shapes the old identifier patterns were
quadratic or exponential on (runs of one class, mixed runs that end in a character
that fails the pattern's last step)."""

_TRIES = 3


def cpu_seconds(call: Callable[[], object], times: int = 1) -> float:
    """The least CPU time of `_TRIES` runs of `times` calls."""
    best = float("inf")
    for _ in range(_TRIES):
        start = time.process_time()
        for _ in range(times):
            call()
        best = min(best, time.process_time() - start)
    return best


def assert_linear(
    function: Callable[[str], object],
    units: Iterable[str] = ADVERSARIAL_UNITS,
    *,
    size: int = 3_000,
    factor: int = 10,
    slack: float = 4.0,
) -> None:
    """`function` on one token of `factor * size` characters costs at most `slack` times
    `factor` calls on `size` characters, for every unit the token repeats."""
    for unit in units:
        small = (unit * (size // len(unit) + 1))[:size] + " tail"
        large = (unit * (size * factor // len(unit) + 1))[: size * factor] + " tail"
        many = cpu_seconds(partial(function, small), times=factor)
        one = cpu_seconds(partial(function, large))
        assert one <= slack * max(many, 1e-4), (unit, one, many)
