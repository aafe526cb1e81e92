"""Compaction planning (design §Compaction, Appendix B): pure decisions, no model calls.

Hysteresis: compaction triggers when the prompt as it would be sent (observation deltas
included) passes the threshold, and plans against the prompt right after the re-freeze that
ends it, down to the floor. Tiers 0 and 1 go in one least-recently-used order: held file content
is distilled (or, while cooling down, just shed) and bare manifest entries evicted; tier 2
summarises the oldest Q/A in bounded chunks and drops exactly the turns folded in.
Planning is one sort (O(n log n)); every step after it is O(1) on the incremental budget.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from live_memory.config import constants as C
from live_memory.memory.file_table import block_chars, line_chars
from live_memory.memory.model import QA_KINDS, FileContext, Turn
from live_memory.memory.window import Window

__all__ = [
    "DistillGate",
    "EvictionPlan",
    "Fitted",
    "Watermarks",
    "apply_eviction",
    "chunk_turns",
    "drop_content",
    "evict_manifest_lru",
    "fit_window",
    "needs_compaction",
    "plan_eviction",
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
    """The prompt as it would be sent (deltas included), or as the next freeze would render
    it (files first seen since the last one), is past the threshold."""
    return window.fill_tokens() > marks.trigger_tokens


def _excess_chars(window: Window, marks: Watermarks) -> int:
    """Characters to free so that the prompt right after a freeze is at the floor."""
    return int(window.refrozen_chars() - marks.floor_tokens * window.chars_per_token)


@dataclass(frozen=True, slots=True)
class EvictionPlan:
    """What tiers 0 and 1 free to reach the floor, chosen in one pass by least recent use."""

    shed: tuple[FileContext, ...] = ()
    """Held content to distil (when allowed) and shed; the entries stay in the manifest."""
    evict: tuple[str, ...] = ()
    """Manifest entries to forget (bare ones, oldest first; then shed ones if still needed)."""
    freed_chars: int = 0
    excess_chars: int = 0


def plan_eviction(window: Window, marks: Watermarks) -> EvictionPlan:
    """Tiers 0 and 1 in one least-recently-used order, O(n log n) in the files.

    Walking the files from the least recently used, held content is shed and bare manifest
    entries are evicted until the refrozen prompt is at the floor: after a notification flood
    the thousands of old bare paths go before the content the agent is working on. If shedding
    every file is not enough, the shed files' manifest entries go too, oldest first.
    """
    need = _excess_chars(window, marks)
    if need <= 0:
        return EvictionPlan(excess_chars=need)
    shed: list[FileContext] = []
    evict: list[str] = []
    freed = 0
    for ctx in sorted(window.files.values(), key=_last_used):
        if freed >= need:
            break
        if ctx.content is not None:
            shed.append(ctx)
            freed += block_chars(ctx)
        else:
            evict.append(ctx.path)
            freed += line_chars(ctx.path, ctx.state)
    for ctx in shed:
        if freed >= need:
            break
        evict.append(ctx.path)
        freed += line_chars(ctx.path, ctx.state)
    return EvictionPlan(tuple(shed), tuple(evict), freed, need)


def apply_eviction(window: Window, plan: EvictionPlan) -> None:
    """Carry out a plan: shed its content, then forget its entries (O(1) per file)."""
    for ctx in plan.shed:
        window.shed_content(ctx.path)
    for path in plan.evict:
        window.evict(path)


@dataclass(frozen=True, slots=True)
class Fitted:
    """What `fit_window` took out of a window."""

    evicted: int = 0
    """Manifest entries forgotten (held content among them shed first)."""
    turns: int = 0
    """History turns dropped, oldest first, without a summary."""
    tokens_before: int = 0
    tokens_after: int = 0


def fit_window(window: Window, marks: Watermarks) -> Fitted:
    """A window past the threshold brought to the floor without a model call: tiers 0 and 1
    (content shed, manifest entries evicted, least recently used first), then the oldest
    history turns dropped unsummarised, whole Q/A pairs. For a window restored under a
    smaller limit than it was saved with, or from a tampered snapshot: nothing may reach
    the model past its limit, and a summary of megabytes is no call to make on restore
    (the facts learnt from those turns are in the ledger and the store already).

    O(n log n) in the files, O(n) in the turns. No-op (an empty `Fitted`) under the
    threshold."""
    before = window.fill_tokens()
    if before <= marks.trigger_tokens:
        return Fitted(tokens_before=before, tokens_after=before)
    plan = plan_eviction(window, marks)
    apply_eviction(window, plan)
    need = _excess_chars(window, marks)
    turns = list(window.history)
    cut = 0
    while cut < len(turns) and need > 0:
        need -= len(turns[cut].text)
        cut += 1
    while cut < len(turns) and turns[cut].kind not in ("question", "retrieval"):
        cut += 1  # never leave an answer without its question
    dropped = window.drop_turns(turns[:cut]) if cut else 0
    return Fitted(len(plan.evict), dropped, before, window.fill_tokens())


def select_lru_content(window: Window, marks: Watermarks) -> list[FileContext]:
    """Least-recently-used files holding content, enough to reach the floor (or all)."""
    held = sorted((f for f in window.files.values() if f.content), key=_last_used)
    chosen, freed, need = [], 0, _excess_chars(window, marks)
    for ctx in held:
        if freed >= need:
            break
        chosen.append(ctx)
        freed += block_chars(ctx)
    return chosen


def drop_content(window: Window, paths: list[str]) -> None:
    """Shed raw bytes but keep manifest entries (re-readable from disk)."""
    for path in paths:
        window.shed_content(path)


def evict_manifest_lru(window: Window, marks: Watermarks) -> int:
    """Tier 1: drop manifest-only contexts, least recently used first, down to the floor.

    One sort, then O(1) per eviction (the budget is incremental): O(n log n)."""
    evicted = 0
    need = _excess_chars(window, marks)
    for ctx in sorted(window.files.values(), key=_last_used):
        if need <= 0:
            break
        if ctx.content is None:
            need -= line_chars(ctx.path, ctx.state)
            window.evict(ctx.path)
            evicted += 1
    return evicted


def split_history_for_summary(
    window: Window, keep_pairs: int = C.RECENT_QA_KEPT_AT_COMPACTION
) -> tuple[list[Turn], list[Turn]]:
    """(oldest Q/A to summarise, the rest to keep) — deltas are dropped by the refreeze."""
    qa = [t for t in window.history if t.kind in QA_KINDS]
    cut = max(len(qa) - 2 * keep_pairs, 0)
    return qa[:cut], qa[cut:]


def chunk_turns(turns: list[Turn], max_chars: int = C.SUMMARY_MAX_INPUT_CHARS) -> list[list[Turn]]:
    """Consecutive chunks of whole Q/A pairs, each at most `max_chars` of turn text, oldest
    first (a single pair longer than that is a chunk of its own, cut by the summariser's
    input cap). Each chunk is summarised on its own, so nothing is dropped unread."""
    chunks: list[list[Turn]] = []
    current: list[Turn] = []
    size = 0
    for i in range(0, len(turns), 2):
        pair = turns[i : i + 2]
        pair_chars = sum(len(t.text) + _TURN_LABEL_CHARS for t in pair)
        if current and size + pair_chars > max_chars:
            chunks.append(current)
            current, size = [], 0
        current.extend(pair)
        size += pair_chars
    if current:
        chunks.append(current)
    return chunks


def _last_used(ctx: FileContext) -> int:
    return ctx.last_used


_TURN_LABEL_CHARS = len("Question: ") + 2  # render_material's label and separator


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
