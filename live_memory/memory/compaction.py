"""Compaction planning (design §Compaction, Appendix B): pure decisions, no model calls.

Hysteresis: compaction triggers above the threshold and compacts down to the floor.
Tier 0 distils (or, while cooling down, sheds) least-recently-used held file content;
tier 1 evicts manifest-only file contexts (LRU); tier 2 summarises the oldest Q/A.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from live_memory.config import constants as C
from live_memory.memory.model import QA_KINDS, FileContext, Turn
from live_memory.memory.window import Window

__all__ = [
    "DistillGate",
    "Watermarks",
    "drop_content",
    "evict_manifest_lru",
    "needs_compaction",
    "select_lru_content",
    "split_history_for_summary",
]


@dataclass(frozen=True, slots=True)
class Watermarks:
    max_tokens: int
    threshold: float
    floor: float

    @property
    def trigger_tokens(self) -> int:
        return int(self.max_tokens * self.threshold)

    @property
    def floor_tokens(self) -> int:
        return int(self.max_tokens * self.floor)


def needs_compaction(window: Window, marks: Watermarks) -> bool:
    return window.estimated_tokens() > marks.trigger_tokens


def _excess_chars(window: Window, marks: Watermarks) -> int:
    return int((window.estimated_tokens() - marks.floor_tokens) * window.chars_per_token)


def select_lru_content(window: Window, marks: Watermarks) -> list[FileContext]:
    """Least-recently-used files holding content, enough to reach the floor (or all)."""
    held = sorted((f for f in window.files.values() if f.content), key=lambda f: f.last_used)
    chosen, freed, need = [], 0, _excess_chars(window, marks)
    for ctx in held:
        if freed >= need:
            break
        chosen.append(ctx)
        freed += len(ctx.content or "")
    return chosen


def drop_content(window: Window, paths: list[str]) -> None:
    """Shed raw bytes but keep manifest entries (re-readable from disk)."""
    for path in paths:
        ctx = window.files.get(path)
        if ctx is not None and ctx.content is not None:
            window.files[path] = replace(ctx, content=None, source="read")


def evict_manifest_lru(window: Window, marks: Watermarks) -> int:
    """Tier 1: drop manifest-only contexts, least recently used first, down to the floor."""
    evicted = 0
    for ctx in sorted(window.files.values(), key=lambda f: f.last_used):
        if window.estimated_tokens() <= marks.floor_tokens:
            break
        if ctx.content is None:
            del window.files[ctx.path]
            evicted += 1
    return evicted


def split_history_for_summary(
    window: Window, keep_pairs: int = C.RECENT_QA_KEPT_AT_COMPACTION
) -> tuple[list[Turn], list[Turn]]:
    """(oldest Q/A to summarise, the rest to keep) — deltas are dropped by the refreeze."""
    qa = [t for t in window.history if t.kind in QA_KINDS]
    cut = max(len(qa) - 2 * keep_pairs, 0)
    return qa[:cut], qa[cut:]


class DistillGate:
    """Per-workspace distillation cooldown, shared by all its forks (thread-safe).

    The reservation is taken before the summariser call, so racing forks shed instead of
    launching duplicate distillations.
    """

    def __init__(
        self,
        min_interval_s: float = C.DISTILL_MIN_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._lock = threading.Lock()
        self._last: float | None = None
        self._busy = False
        self._interval = min_interval_s
        self._clock = clock

    def try_reserve(self) -> bool:
        with self._lock:
            now = self._clock()
            if self._busy or (self._last is not None and now - self._last < self._interval):
                return False
            self._busy, self._last = True, now
            return True

    def release(self) -> None:
        with self._lock:
            self._busy = False
