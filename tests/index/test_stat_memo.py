"""The stat memo's rule (git's racily-clean rule), on plain numbers: no files, no clock."""

from __future__ import annotations

from live_memory.index.stat_memo import ABSENT, StatKey, StatMemo

S = 1_000_000_000  # ns per second


def _key(mtime_s: float, ctime_s: float | None = None, size: int = 10) -> StatKey:
    ctime = mtime_s if ctime_s is None else ctime_s
    return (1, 42, size, int(mtime_s * S), int(ctime * S))


def test_a_stat_older_than_the_racy_window_is_remembered_and_matches_only_itself() -> None:
    memo = StatMemo(racy_s=2.0)
    memo.read("a.py", _key(100.0), taken_ns=103 * S)
    assert memo.unchanged("a.py", _key(100.0))
    assert not memo.unchanged("a.py", _key(100.0, size=11))
    assert not memo.unchanged("a.py", _key(100.0, ctime_s=104.0))
    assert not memo.unchanged("b.py", _key(100.0))


def test_a_stat_within_the_window_of_when_it_was_taken_is_not_trusted() -> None:
    memo = StatMemo(racy_s=2.0)
    # Written 1 s before the stat: another write in the same tick would keep size, mtime and
    # ctime, so the file must be read again next time.
    memo.read("a.py", _key(102.0), taken_ns=103 * S)
    assert not memo.unchanged("a.py", _key(102.0))
    # The mtime set back (touch -d) does not help: the ctime is the write's.
    memo.read("a.py", _key(50.0, ctime_s=102.5), taken_ns=103 * S)
    assert not memo.unchanged("a.py", _key(50.0, ctime_s=102.5))
    # A stamp in the future of our clock (skew) is racy too.
    memo.read("a.py", _key(200.0), taken_ns=103 * S)
    assert len(memo) == 0
    # A racy read also drops what was remembered before.
    memo.read("a.py", _key(90.0), taken_ns=103 * S)
    memo.read("a.py", _key(102.9), taken_ns=103 * S)
    assert not memo.unchanged("a.py", _key(90.0)) and len(memo) == 0


def test_absent_files_forget_and_the_cap() -> None:
    memo = StatMemo(cap=2, racy_s=2.0)
    memo.read("gone.py", ABSENT, taken_ns=0)
    assert memo.unchanged("gone.py", ABSENT)
    memo.forget("gone.py")
    assert not memo.unchanged("gone.py", ABSENT)
    for name in ("a.py", "b.py", "c.py"):
        memo.read(name, _key(1.0), taken_ns=10 * S)
    assert len(memo) == 2  # the oldest is forgotten first
    assert not memo.unchanged("a.py", _key(1.0)) and memo.unchanged("c.py", _key(1.0))
