"""The optimistic commit rule: linear always lands; a race keeps the fork that explored more."""

from __future__ import annotations

from live_memory.memory.commit import decide_commit


def test_linear_commit_is_adopted_even_when_it_explored_less() -> None:
    assert decide_commit(4, 4, 0, (0, 0), (9, 9_999)) == "linear"


def test_linear_commit_is_adopted_right_after_a_wipe() -> None:
    assert decide_commit(7, 7, 7, (0, 0), (0, 0)) == "linear"


def test_race_with_more_files_read_is_adopted() -> None:
    assert decide_commit(3, 4, 0, (5, 10), (4, 99_999)) == "race_adopted"


def test_race_with_equal_files_is_decided_by_tokens() -> None:
    assert decide_commit(3, 4, 0, (2, 501), (2, 500)) == "race_adopted"
    assert decide_commit(3, 4, 0, (2, 499), (2, 500)) == "race_dropped"


def test_race_with_less_exploration_is_dropped() -> None:
    assert decide_commit(3, 4, 0, (1, 10_000), (2, 0)) == "race_dropped"


def test_race_with_exactly_equal_exploration_keeps_what_is_committed() -> None:
    assert decide_commit(3, 5, 0, (2, 500), (2, 500)) == "race_dropped"


def test_fork_taken_before_a_wipe_never_lands_however_much_it_explored() -> None:
    # linear in version terms would not matter either: the wipe bumped the version past it
    assert decide_commit(2, 3, 3, (100, 10**9), (0, 0)) == "race_dropped"
    assert decide_commit(2, 2, 3, (100, 10**9), (0, 0)) == "race_dropped"
