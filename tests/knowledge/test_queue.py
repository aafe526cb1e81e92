"""The transcript queue: idempotent enqueue, claim/done/fail, crash recovery, gc, threads."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from live_memory.knowledge import KnowledgeError, TranscriptError, TranscriptQueue

WS = "/home/dev/project"
OTHER = "/home/dev/other"


class Clock:
    """A clock that advances one second per reading, so orderings by time are deterministic."""

    def __init__(self) -> None:
        self._ticks = itertools.count(1_000_000)
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            return float(next(self._ticks))


@pytest.fixture
def queue(tmp_path: Path) -> Iterator[TranscriptQueue]:
    with TranscriptQueue(tmp_path / "data" / "transcripts.sqlite3", clock=Clock()) as opened:
        yield opened


def _transcript(tmp_path: Path, name: str, text: str = "{}\n") -> Path:
    path = tmp_path / f"{name}.jsonl"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_same_transcript_enqueued_twice_adds_nothing_new(
    queue: TranscriptQueue, transcript: Path
) -> None:
    first = queue.enqueue(WS, "s1", transcript)
    again = queue.enqueue(WS, "s1", transcript)

    assert isinstance(first, int)
    assert again is None
    assert queue.counts() == {"pending": 1, "processing": 0, "done": 0, "failed": 0}


def test_a_done_transcript_enqueued_again_adds_nothing_new(
    queue: TranscriptQueue, transcript: Path
) -> None:
    row_id = queue.enqueue(WS, "s1", transcript)
    claimed = queue.claim(WS)
    assert claimed is not None and claimed.id == row_id
    queue.done(claimed.id)

    assert queue.enqueue(WS, "s1", transcript) is None
    assert queue.counts() == {"pending": 0, "processing": 0, "done": 1, "failed": 0}


def test_a_grown_transcript_updates_its_waiting_row_instead_of_queueing_twice(
    queue: TranscriptQueue, tmp_path: Path
) -> None:
    path = _transcript(tmp_path, "s1", '{"turn": 1}\n')
    first = queue.enqueue(WS, "s1", path)
    path.write_text('{"turn": 1}\n{"turn": 2}\n', encoding="utf-8")

    grown = queue.enqueue(WS, "s1", path, digest="user: turn two")

    assert grown == first
    assert queue.counts()["pending"] == 1
    claimed = queue.claim(WS)
    assert claimed is not None and claimed.digest == "user: turn two"
    path.write_text('{"turn": 1}\n{"turn": 2}\n{"turn": 3}\n', encoding="utf-8")
    assert queue.enqueue(WS, "s1", path) not in (None, first)  # in flight: a new row


def test_claim_hands_out_the_oldest_pending_row_of_that_workspace_once(
    queue: TranscriptQueue, tmp_path: Path
) -> None:
    a = queue.enqueue(WS, "a", _transcript(tmp_path, "a"))
    queue.enqueue(OTHER, "o", _transcript(tmp_path, "o"))
    b = queue.enqueue(WS, "b", _transcript(tmp_path, "b", "[]\n"))

    first, second, third = queue.claim(WS), queue.claim(WS), queue.claim(WS)

    assert first is not None and first.id == a and first.status == "processing"
    assert first.workspace == WS and first.session_id == "a" and first.retries == 0
    assert first.transcript_path == str(tmp_path / "a.jsonl")
    assert second is not None and second.id == b
    assert third is None
    assert queue.counts(WS) == {"pending": 0, "processing": 2, "done": 0, "failed": 0}
    assert queue.counts(OTHER)["pending"] == 1
    assert queue.done(a) is True
    assert queue.done(a) is False  # no longer processing
    assert queue.counts(WS)["done"] == 1


def test_a_failing_row_is_retried_and_ends_failed_on_the_third_failure(
    queue: TranscriptQueue, transcript: Path
) -> None:
    row_id = queue.enqueue(WS, "s1", transcript)
    assert row_id is not None
    outcomes = []
    for attempt in range(3):
        claimed = queue.claim(WS)
        assert claimed is not None and claimed.retries == attempt
        outcomes.append(queue.fail(row_id, f"summariser timed out ({attempt + 1})"))

    assert outcomes == ["pending", "pending", "failed"]
    assert queue.claim(WS) is None
    assert queue.fail(row_id, "again") is None  # only processing rows can fail
    assert queue.counts() == {"pending": 0, "processing": 0, "done": 0, "failed": 1}
    assert queue.workspaces_with_pending() == []
    assert queue.enqueue(WS, "s1", transcript) is None  # the same content is not retried


def test_a_row_left_processing_by_a_crash_is_recovered_after_reopening(
    tmp_path: Path, transcript: Path
) -> None:
    path = tmp_path / "transcripts.sqlite3"
    crashed = TranscriptQueue(path)
    row_id = crashed.enqueue(WS, "s1", transcript)
    pending_id = crashed.enqueue(OTHER, "s2", transcript)
    assert crashed.claim(WS) is not None
    crashed.close()  # the process died before done()

    with TranscriptQueue(path) as restarted:
        assert restarted.counts() == {"pending": 1, "processing": 1, "done": 0, "failed": 0}
        assert restarted.recover() == 1
        assert restarted.recover() == 0
        again = restarted.claim(WS)
        assert again is not None and again.id == row_id and again.retries == 0
        waiting = restarted.claim(OTHER)
        assert waiting is not None and waiting.id == pending_id


def test_gc_keeps_the_30_most_recent_sessions_and_drops_the_rest_with_their_rows(
    queue: TranscriptQueue, tmp_path: Path
) -> None:
    paths = [_transcript(tmp_path, f"s{i}", f'{{"n": {i}}}\n') for i in range(35)]
    for i, path in enumerate(paths):
        queue.enqueue(WS, f"s{i}", path)

    assert queue.gc_sessions() == 5
    assert queue.gc_sessions() == 0
    assert queue.counts()["pending"] == 30
    # The five oldest are forgotten (their transcript would queue again), the rest are known.
    assert all(queue.enqueue(WS, f"s{i}", paths[i]) is None for i in range(5, 35))
    assert all(isinstance(queue.enqueue(WS, f"s{i}", paths[i]), int) for i in range(5))


def test_a_session_seen_again_is_recent_again(queue: TranscriptQueue, tmp_path: Path) -> None:
    old = _transcript(tmp_path, "old", '{"v": 1}\n')
    queue.enqueue(WS, "old", old)
    queue.enqueue(WS, "new", _transcript(tmp_path, "new"))
    old.write_text('{"v": 2}\n', encoding="utf-8")
    queue.enqueue(WS, "old", old)

    assert queue.gc_sessions(keep=1) == 1
    assert queue.enqueue(WS, "old", old) is None


def test_workspaces_with_pending_lists_each_once(queue: TranscriptQueue, tmp_path: Path) -> None:
    queue.enqueue(WS, "a", _transcript(tmp_path, "a"))
    queue.enqueue(WS, "b", _transcript(tmp_path, "b"))
    queue.enqueue(OTHER, "c", _transcript(tmp_path, "c"))

    assert queue.workspaces_with_pending() == [OTHER, WS]


def test_threads_enqueue_and_claim_without_losing_or_doubling_a_row(
    queue: TranscriptQueue, tmp_path: Path
) -> None:
    threads_n, per_thread = 8, 10
    paths = [
        [_transcript(tmp_path, f"t{t}-{i}", f'{{"t": {t}, "i": {i}}}\n') for i in range(per_thread)]
        for t in range(threads_n)
    ]
    start = threading.Barrier(threads_n)
    enqueued: list[int | None] = []
    claimed: list[int] = []
    lock = threading.Lock()

    def produce(t: int) -> None:
        start.wait(timeout=5)
        for i, path in enumerate(paths[t]):
            row = queue.enqueue(WS, f"t{t}-{i}", path)
            with lock:
                enqueued.append(row)

    def consume() -> None:
        start.wait(timeout=5)
        while (row := queue.claim(WS)) is not None:
            queue.done(row.id)
            with lock:
                claimed.append(row.id)

    _run_threads([threading.Thread(target=produce, args=(t,)) for t in range(threads_n)])
    start.reset()
    _run_threads([threading.Thread(target=consume) for _ in range(threads_n)])

    assert None not in enqueued
    assert len(set(enqueued)) == threads_n * per_thread
    assert sorted(claimed) == sorted(r for r in enqueued if r is not None)
    assert queue.counts()["done"] == threads_n * per_thread


def _run_threads(threads: list[threading.Thread]) -> None:
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
        assert not thread.is_alive()


def test_enqueueing_a_missing_transcript_raises_transcript_error(
    queue: TranscriptQueue, tmp_path: Path
) -> None:
    with pytest.raises(TranscriptError, match=r"nope\.jsonl"):
        queue.enqueue(WS, "s1", tmp_path / "nope.jsonl")
    assert queue.counts()["pending"] == 0


def test_a_closed_queue_refuses_calls_and_closing_twice_is_harmless(
    tmp_path: Path, transcript: Path
) -> None:
    queue = TranscriptQueue(tmp_path / "q.sqlite3")
    queue.close()
    queue.close()

    with pytest.raises(KnowledgeError, match="closed"):
        queue.enqueue(WS, "s1", transcript)


def test_a_database_that_cannot_be_opened_raises_knowledge_error(tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()

    with pytest.raises(KnowledgeError, match="transcript queue"):
        TranscriptQueue(tmp_path / "taken")
