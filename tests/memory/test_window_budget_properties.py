"""Property tests of the window's budget: whatever the sequence of changes, the incremental
estimate equals the prompt that would be sent, held bytes stay under their cap, and the
planned compaction reaches the floor it aims at.

Examples: 400 sequences of up to 60 changes (hypothesis, deadline off).
"""

from __future__ import annotations

import hashlib

from hypothesis import given, settings
from hypothesis import strategies as st

from live_memory.memory.compaction import Watermarks, apply_eviction, plan_eviction
from live_memory.memory.model import LedgerFact
from live_memory.memory.window import Window

CAP = 120
OPS = (
    "observe",
    "preload",
    "read",
    "stale",
    "deleted",
    "sync",
    "refresh",
    "qa",
    "learn",
    "shed",
    "evict",
    "freeze",
)
change = st.tuples(st.sampled_from(OPS), st.integers(0, 9), st.integers(0, 80))


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def apply(window: Window, op: str, index: int, size: int) -> None:
    path = f"src/f{index}.py"
    text = chr(97 + index) * size
    match op:
        case "observe":
            window.observe(path, text, sha(text), size, held_cap=CAP)
        case "preload":
            window.observe(path, text, sha(text), size, source="preloaded", held_cap=CAP)
        case "read":
            window.record_read(path, sha(str(size % 3)), size)
        case "stale":
            window.mark_stale(path)
        case "deleted":
            window.mark_deleted(path)
        case "sync":
            window.sync_deltas()
        case "refresh":
            window.refresh(2_000, share=0.05)
        case "qa":
            window.append_qa("q" * size, "a" * (size // 2))
        case "learn":
            window.learn([LedgerFact(f"{path} holds {size} things", ((path, sha(text)),))])
        case "shed":
            window.shed_content(path)
        case "evict":
            window.evict(path)
        case _:
            window.freeze()


def sent_chars(window: Window) -> int:
    fork = window.copy()
    fork.sync_deltas()
    assert fork.frozen is not None
    return len(fork.tree) + len(fork.frozen) + sum(len(t.text) for t in fork.history)


@settings(max_examples=400, deadline=None)
@given(st.lists(change, max_size=60), st.booleans())
def test_the_estimate_is_the_prompt_that_would_be_sent(
    changes: list[tuple[str, int, int]], frozen_first: bool
) -> None:
    window = Window("/repo", tree="tree\n")
    if frozen_first:
        window.freeze()
    for op, index, size in changes:
        apply(window, op, index, size)
        observed = sum(
            f.size
            for f in window.files.values()
            if f.content is not None and f.source != "preloaded"
        )
        assert window.held_bytes == observed <= CAP
        if window.frozen is not None:
            assert window.prompt_chars() == sent_chars(window)
        fork = window.copy()
        refrozen = fork.refrozen_chars()
        fork.freeze()
        assert refrozen == sent_chars(fork)


@settings(max_examples=200, deadline=None)
@given(st.lists(change, max_size=60), st.floats(0.05, 0.95))
def test_planned_eviction_reaches_the_floor_or_frees_every_file(
    changes: list[tuple[str, int, int]], floor: float
) -> None:
    window = Window("/repo")
    window.freeze()
    for op, index, size in changes:
        apply(window, op, index, size)
    marks = Watermarks(max(window.refrozen_tokens(), 1), 0.99, floor)
    apply_eviction(window, plan_eviction(window, marks))
    assert window.refrozen_tokens() <= marks.floor_tokens + 1 or len(window.files) == 0
