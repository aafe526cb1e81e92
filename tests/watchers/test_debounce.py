from __future__ import annotations

from live_memory.watchers import Change, ChangeKind, Debouncer

QUIET = 0.2
MAX_DELAY = 1.0


def settle(*kinds: ChangeKind) -> list[Change]:
    debouncer = Debouncer(QUIET, MAX_DELAY)
    for i, kind in enumerate(kinds):
        debouncer.add("a.py", kind, i * 0.01)
    return debouncer.pop_due(10.0)


def test_created_then_modified_settles_as_add() -> None:
    assert settle("add", "change", "change") == [Change("a.py", "add")]


def test_created_then_deleted_settles_as_nothing() -> None:
    assert settle("add", "change", "unlink") == []


def test_deleted_then_created_settles_as_change() -> None:
    assert settle("unlink", "add", "change") == [Change("a.py", "change")]


def test_modified_then_deleted_settles_as_unlink() -> None:
    assert settle("change", "unlink") == [Change("a.py", "unlink")]


def test_deleted_recreated_and_deleted_again_settles_as_unlink() -> None:
    assert settle("unlink", "add", "unlink") == [Change("a.py", "unlink")]


def test_a_path_is_held_until_it_has_been_quiet() -> None:
    debouncer = Debouncer(QUIET, MAX_DELAY)
    debouncer.add("a.py", "change", 0.0)
    debouncer.add("a.py", "change", 0.15)
    assert debouncer.pop_due(0.3) == []
    assert debouncer.next_due() == 0.15 + QUIET
    assert debouncer.pop_due(0.35) == [Change("a.py", "change")]
    assert len(debouncer) == 0


def test_a_path_written_without_pause_is_released_after_the_max_delay() -> None:
    debouncer = Debouncer(QUIET, MAX_DELAY)
    released: list[Change] = []
    t = 0.0
    while t < 1.5:
        debouncer.add("app.log", "change", t)
        released += debouncer.pop_due(t)
        t += 0.05
    assert released == [Change("app.log", "change")]


def test_paths_are_debounced_independently() -> None:
    debouncer = Debouncer(QUIET, MAX_DELAY)
    debouncer.add("early.py", "change", 0.0)
    debouncer.add("late.py", "add", 0.5)
    assert debouncer.pop_due(0.3) == [Change("early.py", "change")]
    assert debouncer.pop_due(0.6) == []
    assert debouncer.pop_due(0.7) == [Change("late.py", "add")]


def test_an_idle_debouncer_has_nothing_due() -> None:
    debouncer = Debouncer(QUIET, MAX_DELAY)
    assert debouncer.next_due() is None
    assert debouncer.pop_due(100.0) == []
