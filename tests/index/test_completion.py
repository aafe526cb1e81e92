"""An index's completion flag behaves as the threading.Event it replaced (set, is_set, wait)."""

from __future__ import annotations

import threading

from live_memory.index.completion import Completion


def test_wait_times_out_until_set_and_then_returns_at_once() -> None:
    flag = Completion()
    assert not flag.is_set()
    assert flag.wait(0.01) is False
    flag.set()
    assert flag.is_set()
    assert flag.wait(0) is True


def test_a_waiter_on_a_shared_condition_wakes_only_for_its_own_flag() -> None:
    shared = threading.Condition()
    mine, other = Completion(shared), Completion(shared)
    woke = threading.Event()
    result: list[bool] = []

    def wait() -> None:
        result.append(mine.wait(30))
        woke.set()

    waiter = threading.Thread(target=wait)
    waiter.start()
    other.set()  # notifies the shared condition: the waiter re-checks and keeps waiting
    assert not woke.wait(0.05)
    mine.set()
    assert woke.wait(30)
    waiter.join(30)
    assert result == [True]
