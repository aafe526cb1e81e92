"""The start-up heap: garbage is collected first, what lives on is skipped by collections."""

from __future__ import annotations

import gc
import weakref

from live_memory.gateway.startup_heap import set_aside_startup_heap


class _Node:
    def __init__(self) -> None:
        self.other: _Node | None = None


def test_garbage_is_collected_and_what_lives_on_is_set_aside() -> None:
    dead_a, dead_b = _Node(), _Node()
    dead_a.other, dead_b.other = dead_b, dead_a  # a cycle only the collector frees
    gone = weakref.ref(dead_a)
    del dead_a, dead_b
    alive = _Node()
    alive.other = alive
    try:
        assert set_aside_startup_heap() > 0
        assert gone() is None  # collected, not frozen with the rest
        assert all(obj is not alive for obj in gc.get_objects())  # in no generation now
    finally:
        gc.unfreeze()  # the test process's heap goes back to the collector
    assert any(obj is alive for obj in gc.get_objects())
