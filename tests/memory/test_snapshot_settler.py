"""The settler: a root is settled once per wait, after its delay, or at once for wait_idle."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from live_memory.memory.snapshot_settler import SnapshotSettler

WAIT_S = 30.0
A, B = Path("/work/a"), Path("/work/b")


def test_saves_of_one_root_within_the_delay_share_one_settle() -> None:
    settled: list[Path] = []
    settler = SnapshotSettler(settled.append, delay_s=3600.0)  # due only for wait_idle
    for root in (A, B, A, A, B):
        settler.submit(root)
    assert settler.wait_idle(WAIT_S)  # settles what waits now, oldest first
    assert settled == [A, B]
    settler.submit(A)  # a save after its settle waits for a settle of its own
    assert settler.wait_idle(WAIT_S)
    assert settled == [A, B, A]


def test_a_root_is_settled_on_its_own_once_its_delay_has_passed() -> None:
    done = threading.Event()
    at: list[float] = []

    def settle(root: Path) -> None:
        at.append(time.monotonic())
        done.set()

    delay_s = 0.2
    settler = SnapshotSettler(settle, delay_s=delay_s)
    submitted = time.monotonic()
    settler.submit(A)
    assert done.wait(WAIT_S)  # nobody called wait_idle
    assert at[0] - submitted >= delay_s


def test_a_failing_settle_is_logged_and_the_line_goes_on() -> None:
    settled: list[Path] = []

    def settle(root: Path) -> None:
        if root == A:
            raise OSError("disk gone")
        settled.append(root)

    settler = SnapshotSettler(settle, delay_s=3600.0)
    settler.submit(A)
    settler.submit(B)
    assert settler.wait_idle(WAIT_S)
    assert settled == [B]
