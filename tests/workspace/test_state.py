"""The workspace state machine, one behaviour (and one past fault) per test, no threads."""

from __future__ import annotations

import pickle
from pathlib import Path

from live_memory.errors import AnswerNotPersisted, ClientGone
from live_memory.workspace import (
    Account,
    CancelFork,
    Fail,
    FileEvent,
    Persist,
    Question,
    Reply,
    StartFork,
    WantPassivation,
)
from tests.workspace.support import finish, make_state, of, persist_all


def q(slot: int, text: str = "what?") -> Question:
    return Question(slot, text, 500, 100.0)


def test_a_commit_persists_then_answers_then_accounts(tmp_path: Path) -> None:
    state = make_state(tmp_path)
    (start,) = of(StartFork, state.ask(q(1), now=1.0))
    window, outcome = finish(start)
    effects = state.fork_done(start.fork_id, window, outcome, now=2.0)
    assert [type(e) for e in effects] == [Persist]  # nothing is acknowledged before the write
    assert effects[0].snapshot["history"][-1]["text"] == "an answer"
    after = state.persisted(effects[0].ticket, None)
    kinds = [type(e) for e in after]
    assert kinds.index(Reply) < kinds.index(Account)
    assert of(Reply, after)[0].slot == 1
    assert state.degraded is None and not state.dirty


def test_a_refused_snapshot_fails_the_asker_with_the_answer_marked_not_persisted(
    tmp_path: Path,
) -> None:
    state = make_state(tmp_path)
    (start,) = of(StartFork, state.ask(q(1), now=1.0))
    window, outcome = finish(start, "forty-two")
    effects = persist_all(state, state.fork_done(start.fork_id, window, outcome, 2.0), "ENOSPC")
    (fail,) = of(Fail, effects)
    assert isinstance(fail.error, AnswerNotPersisted)
    assert "forty-two" in str(fail.error) and "NOT persisted" in str(fail.error)
    assert not of(Reply, effects)
    assert of(Account, effects)  # the spend happened all the same
    assert state.degraded == "ENOSPC" and state.dirty
    # The next sweep retries at once (not debounced) and a success clears the degradation.
    (retry,) = of(Persist, state.tick(now=3.0, idle_after_s=900.0))
    state.persisted(retry.ticket, None)
    assert state.degraded is None and not state.dirty


def test_effects_and_the_answer_are_plain_picklable_data(tmp_path: Path) -> None:
    state = make_state(tmp_path)
    (start,) = of(StartFork, state.ask(q(1), now=1.0))
    assert pickle.loads(pickle.dumps(start)).question == "what?"
    window, outcome = finish(start)
    effects = persist_all(state, state.fork_done(start.fork_id, window, outcome, 2.0))
    assert pickle.loads(pickle.dumps(effects)) == effects
    failed = persist_all(state, state.fork_done(99, window, outcome, 2.0), "disk full")
    assert pickle.loads(pickle.dumps(failed)) == failed


def test_an_asker_that_went_away_is_failed_once_and_its_fork_cancelled(tmp_path: Path) -> None:
    state = make_state(tmp_path)
    starts = of(StartFork, [e for i in range(1, 6) for e in state.ask(q(i), now=1.0)])
    assert len(starts) == 3 and len(state.pending) == 2
    (gone,) = state.cancelled(5)  # waiting: failed now, never started
    assert isinstance(gone, Fail) and isinstance(gone.error, ClientGone)
    (cancel,) = state.cancelled(1)  # running: the fork is cancelled and fails on its own
    assert cancel == CancelFork(starts[0].fork_id, "asker went away")
    after = state.fork_failed(starts[0].fork_id, ClientGone("gone"))
    assert of(Fail, after)[0].slot == 1
    assert [s.slot for s in of(StartFork, after)] == [4]


def test_the_notify_log_is_bounded_by_the_forks_in_flight_under_overlapping_questions(
    tmp_path: Path,
) -> None:
    """Fault 6: with a fork always in flight the log used to grow until the server was
    quiet; now it holds only what some in-flight fork has not seen."""
    state = make_state(tmp_path)
    running = of(StartFork, state.ask(q(1), now=0.0) + state.ask(q(2), now=0.0))
    longest = 0
    for i in range(300):
        state.notify((FileEvent(f"f{i % 7}.py", "read", f"x = {i}\n"),), now=float(i))
        if i % 5 == 4:  # the oldest fork finishes and a new question starts: always overlap
            oldest = running.pop(0)
            window, outcome = finish(oldest)
            persist_all(state, state.fork_done(oldest.fork_id, window, outcome, float(i)))
            running += of(StartFork, state.ask(q(100 + i), now=float(i)))
        longest = max(longest, len(state.notify_log))
        bases = [f.base_seq for f in state.in_flight.values()]
        oldest_entry = state.notify_log.oldest_seq()
        assert oldest_entry is None or oldest_entry > min(bases)
    assert longest <= 10  # two forks of five notifications each, not 300


def test_the_notify_log_sheds_bytes_past_its_cap_but_keeps_the_change(tmp_path: Path) -> None:
    state = make_state(tmp_path)
    (start,) = of(StartFork, state.ask(q(1), now=0.0))
    big = "y" * 40_000
    for i in range(5):
        state.notify((FileEvent(f"big{i}.py", "read", big),), now=1.0)
    assert state.notify_log.held_bytes <= state.limits.notify_log_max_bytes
    window, outcome = finish(start)
    persist_all(state, state.fork_done(start.fork_id, window, outcome, 2.0))
    assert state.window.files["big4.py"].content == big  # the newest bytes were kept
    shed = state.window.files.get("big0.py")  # shed: never held as current bytes it lacks
    assert shed is None or shed.content is None


def test_a_workspace_that_only_hears_notifications_is_passivated_when_idle(
    tmp_path: Path,
) -> None:
    state = make_state(tmp_path)
    for t in range(0, 1000, 10):
        state.notify((FileEvent("a.py", "read", f"a = {t}\n"),), now=float(t))
        effects = state.tick(now=float(t), idle_after_s=900.0)
        for persist in of(Persist, effects):  # the manifest is snapshotted, debounced
            assert persist.snapshot["files"][0]["path"] == "a.py"
            state.persisted(persist.ticket, None)
    assert WantPassivation() in state.tick(now=1000.0, idle_after_s=900.0)


def test_notified_files_reach_the_snapshot_after_the_debounce(tmp_path: Path) -> None:
    """Fault 10: only adopted answers were snapshotted, so the manifest was lost."""
    state = make_state(tmp_path)
    state.notify((FileEvent("src/a.py", "read", "A = 1\n"),), now=10.0)
    assert not of(Persist, state.tick(now=12.0, idle_after_s=900.0))  # debounced
    (persist,) = of(Persist, state.tick(now=15.0, idle_after_s=900.0))
    assert [f["path"] for f in persist.snapshot["files"]] == ["src/a.py"]
    assert "content" not in persist.snapshot["files"][0]  # never the bytes
    state.persisted(persist.ticket, None)
    assert not state.dirty


def test_deltas_past_their_share_make_the_next_question_refreeze(tmp_path: Path) -> None:
    state = make_state(tmp_path)
    share_chars = int(0.25 * 200_000 * state.window.chars_per_token)
    state.notify((FileEvent("big.py", "read", "z" * (share_chars // 2)),), now=0.0)
    (first,) = of(StartFork, state.ask(q(1), now=0.0))  # appended as a delta
    assert state.refreezes == 0 and state.window.delta_chars() > share_chars // 2
    window, outcome = finish(first)
    persist_all(state, state.fork_done(first.fork_id, window, outcome, 1.0))
    state.notify((FileEvent("big2.py", "read", "w" * (share_chars // 2 + 10)),), now=1.0)
    (second,) = of(StartFork, state.ask(q(2), now=1.0))
    assert state.refreezes == 1
    assert second.window.delta_chars() == 0
    assert "w" * 100 in (second.window.frozen or "")


def test_a_wipe_drops_forks_taken_before_it_and_their_log(tmp_path: Path) -> None:
    state = make_state(tmp_path)
    (start,) = of(StartFork, state.ask(q(1), now=0.0))
    state.notify((FileEvent("a.py", "read", "a\n"),), now=0.0)
    state.wipe(now=1.0)
    assert len(state.notify_log) == 0
    window, outcome = finish(start)
    effects = persist_all(state, state.fork_done(start.fork_id, window, outcome, 2.0))
    assert of(Reply, effects)  # answered, but its window never lands on the wiped memory
    assert state.window.history == []
    assert state.counters.commits["race_dropped"] == 1
