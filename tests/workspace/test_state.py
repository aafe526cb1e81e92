"""The workspace state machine, one behaviour (and one past fault) per test, no threads."""

from __future__ import annotations

import pickle
from pathlib import Path

from live_memory.config import constants as C
from live_memory.errors import AnswerNotPersisted, ClientGone
from live_memory.memory import (
    Ingestor,
    Watermarks,
    Window,
    needs_compaction,
    window_from_state,
    window_to_state,
)
from live_memory.workspace import (
    Account,
    CancelFork,
    Fail,
    FileEvent,
    Limits,
    Persist,
    Question,
    Reply,
    StartFork,
    WantPassivation,
    WorkspaceCounters,
    WorkspaceState,
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


SMALL = Limits(
    concurrency=1,
    max_pending=4,
    max_context_tokens=4_000,
    refreeze_delta_share=0.25,
    manifest_debounce_s=5.0,
    notify_log_max_bytes=64 * 1024,
)


def test_a_flood_of_distinct_reads_keeps_the_manifest_under_its_cap_least_recently_used_out(
    tmp_path: Path,
) -> None:
    """Hundreds of distinct teed paths into a small window: the manifest stays within its
    share of the window, the paths seen last (and one read again) are kept, the oldest go,
    and no freeze would render past the compaction threshold."""
    state = WorkspaceState(str(tmp_path), Ingestor(tmp_path, max_held_bytes=2_000), SMALL, 0.0)
    state.window.freeze()
    frozen = state.window.frozen
    cap = SMALL.manifest_max_chars
    for i in range(400):
        event = FileEvent(f"src/pkg{i % 7}/module_{i}.py", "read", f"v = {i}\n")
        state.notify((event,), now=float(i))
        if i % 50 == 0:  # an agent going back to a file it read first
            state.notify((FileEvent("src/pkg0/module_0.py", "read", "v = 0\n"),), now=float(i))
        assert state.window.files.manifest_chars <= cap
    window = state.window
    assert 20 < len(window.files) < 400
    assert "src/pkg0/module_0.py" in window.files and "src/pkg0/module_399.py" in window.files
    assert "src/pkg1/module_1.py" not in window.files
    assert window.frozen == frozen  # the cached prefix changes only at a freeze
    sent = window.copy()
    sent.freeze()
    assert len(sent.frozen or "") / C.CHARS_PER_TOKEN < SMALL.watermarks.trigger_tokens


def test_paths_first_seen_since_the_freeze_count_toward_the_fill_and_trigger_compaction(
    tmp_path: Path,
) -> None:
    """Bare entries added since the last freeze are in no prompt yet, but the next freeze
    renders them: the fill counts them, so compaction makes room before that."""
    window = Window(str(tmp_path))
    window.freeze()
    for i in range(300):
        window.record_read(f"src/module_{i}.py", f"{i:064x}", 10)
    assert window.estimated_tokens() < window.refrozen_tokens() == window.fill_tokens()
    marks = Watermarks(window.fill_tokens() - 1, 1.0, 0.5)
    assert needs_compaction(window, marks)
    assert window.next_prompt_tokens(marks.max_tokens) == window.fill_tokens()


def test_a_window_restored_under_a_smaller_limit_is_fitted_before_anything_is_sent(
    tmp_path: Path,
) -> None:
    """Saved under 150k tokens, restored under 4k: the restore event brings the window to
    the floor without a model call (oldest turns dropped, newest kept whole), and the
    first question's window is within the limit."""
    big = Window(str(tmp_path))
    for i in range(40):
        big.append_qa(f"question {i}?", f"answer {i} " + "x" * 2_000)
    for i in range(200):
        big.record_read(f"src/module_{i}.py", f"{i:064x}", 10)
    snapshot = window_to_state(big)
    state = make_state(tmp_path, SMALL)
    restored = window_from_state(str(tmp_path), snapshot, lambda p: f"{int(p[11:-3]):064x}")
    fitted = state.restore(restored, WorkspaceCounters(), 3)
    assert fitted.turns > 0 and fitted.tokens_before > SMALL.max_context_tokens
    assert state.window.fill_tokens() <= SMALL.watermarks.floor_tokens
    history = list(state.window.history)
    assert history and history[0].kind == "question" and history[-1].text.startswith("answer 39")
    state.window.freeze()
    (start,) = of(StartFork, state.ask(q(1), now=1.0))
    assert start.window.estimated_tokens() <= SMALL.max_context_tokens


def test_a_window_within_the_limit_is_restored_as_it_was(tmp_path: Path) -> None:
    small = Window(str(tmp_path))
    small.append_qa("where?", "here.")
    small.record_read("a.py", "0" * 64, 1)
    state = make_state(tmp_path, SMALL)
    restored = window_from_state(str(tmp_path), window_to_state(small), lambda p: "0" * 64)
    fitted = state.restore(restored, WorkspaceCounters(), 1)
    assert (fitted.evicted, fitted.turns) == (0, 0)
    assert list(state.window.history) == list(small.history) and "a.py" in state.window.files
