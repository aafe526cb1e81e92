"""ActiveWorkspaces: the cap on workspaces active at once, as a plain object (no threads).

The gateway asks the least recently used to passivate if idle; each answers by passivating
(`passivating`) or by staying (`stays`). These tests play both sides by hand.
"""

from __future__ import annotations

from live_memory.actors.passivation import ActiveWorkspaces, MakeRoom


def _active(*roots: str) -> ActiveWorkspaces[str]:
    active: ActiveWorkspaces[str] = ActiveWorkspaces()
    for root in roots:
        active.add(root, f"ref:{root}")
    return active


def test_under_the_cap_nobody_is_asked() -> None:
    active = _active("a", "b", "c")
    assert active.activated(cap=3) == MakeRoom()
    assert list(active) == ["a", "b", "c"]
    assert active.asked_to_passivate == 0


def test_past_the_cap_the_least_recently_used_is_asked_and_its_passivation_ends_the_round() -> None:
    active = _active("a", "b", "c")
    active.touch("a")  # a request for a went through the gateway: b is now the oldest
    active.add("d", "ref:d")
    assert active.activated(cap=3) == MakeRoom(ask=("b",))
    # More activations while b's answer is on its way ask the next ones, not b again.
    active.add("e", "ref:e")
    assert active.activated(cap=3) == MakeRoom(ask=("c",))
    ref, room = active.passivating("b", cap=3)
    assert ref == "ref:b" and room == MakeRoom()  # c's answer is still to come
    ref, room = active.passivating("c", cap=3)
    assert ref == "ref:c" and room == MakeRoom()
    assert list(active) == ["a", "d", "e"]
    assert active.asked_to_passivate == 2 and active.admitted_over_cap == 0


def test_a_busy_one_stays_counts_as_used_and_the_next_oldest_is_asked() -> None:
    active = _active("a", "b", "c", "d")
    assert active.activated(cap=3) == MakeRoom(ask=("a",))
    assert active.stays("a", cap=3) == MakeRoom(ask=("b",))
    assert list(active) == ["b", "c", "d", "a"]  # a moved to the most recently used end
    ref, room = active.passivating("b", cap=3)
    assert ref == "ref:b" and room == MakeRoom()
    assert list(active) == ["c", "d", "a"]


def test_when_every_one_asked_is_busy_the_new_one_is_admitted_over_the_cap() -> None:
    active = _active("a", "b", "c")
    assert active.activated(cap=2) == MakeRoom(ask=("a",))
    assert active.stays("a", cap=2) == MakeRoom(ask=("b",))
    # c is the newest (just activated): never asked to make room for itself.
    assert active.stays("b", cap=2) == MakeRoom(over_cap=1)
    assert len(active) == 3 and active.admitted_over_cap == 1
    # Nothing is asked again until the next activation starts a new round.
    assert active.stays("b", cap=2) == MakeRoom()
    active.add("d", "ref:d")
    assert active.activated(cap=2) == MakeRoom(ask=("c", "a"))


def test_the_last_asked_passivating_with_room_still_short_closes_the_round_over_the_cap() -> None:
    active = _active("a", "b", "c", "d")
    assert active.activated(cap=2) == MakeRoom(ask=("a", "b"))
    assert active.stays("a", cap=2) == MakeRoom(ask=("c",))
    _, room = active.passivating("b", cap=2)
    assert room == MakeRoom()  # c's answer may still make the room
    assert active.stays("c", cap=2) == MakeRoom(over_cap=1)
    assert list(active) == ["d", "a", "c"] and active.admitted_over_cap == 1


def test_an_answer_from_a_root_that_went_meanwhile_is_ignored() -> None:
    active = _active("a", "b", "c")
    assert active.activated(cap=2) == MakeRoom(ask=("a",))
    assert active.pop("a") == "ref:a"  # restarted (the supervisor), or passivated by the sweep
    assert active.stays("a", cap=2) == MakeRoom()
    assert "a" not in active
    # The idle sweep's passivation of one never asked does not start asking.
    ref, room = active.passivating("b", cap=2)
    assert ref == "ref:b" and room == MakeRoom()
    assert active.get("b") is None


def test_a_cap_lowered_by_a_reload_asks_for_as_many_as_are_over_it() -> None:
    active = _active("a", "b", "c", "d", "e")
    assert active.activated(cap=2) == MakeRoom(ask=("a", "b", "c"))
    assert active.asked_to_passivate == 3
