"""The retrieval delta: one observation turn, only unseen lines, within its cap."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from live_memory.agent import QuestionJob, RetrievalPart, append_retrieval, retrieve_all
from live_memory.agent.question import retrieve_for_job
from live_memory.config import constants as C
from live_memory.memory import Window


class Lines:
    def __init__(self, heading: str, lines: list[str], *, grounds: bool = False) -> None:
        self.heading, self.lines, self.grounds = heading, lines, grounds

    def retrieve(self, question: str, seen: Callable[[str], bool]) -> RetrievalPart | None:
        fresh = tuple(line for line in self.lines if not seen(line))
        return RetrievalPart(self.heading, fresh, self.grounds) if fresh else None


class Broken:
    def retrieve(self, question: str, seen: Callable[[str], bool]) -> RetrievalPart | None:
        raise RuntimeError("store is gone")


def test_delta_is_one_observation_with_only_unseen_lines_and_survives_a_broken_store() -> None:
    window = Window(root="/r")
    window.freeze()
    window.append_qa("earlier?", "src/a.py:3 def alpha() is the entry point")
    before = [t.text for t in window.history]
    retrieval = retrieve_all(
        [
            Broken(),
            Lines("Symbols", ["src/a.py:3 def alpha()", "src/b.py:9 class Beta"], grounds=True),
            Lines("Facts", ["Beta caches results"]),
        ],
        "where is Beta?",
        window,
    )
    assert retrieval.grounds and retrieval.lines == 2
    assert append_retrieval(window, retrieval)
    texts = [t.text for t in window.history]
    assert texts[: len(before)] == before  # append-only
    delta = texts[len(before)]
    assert "src/b.py:9 class Beta" in delta and "Beta caches results" in delta
    assert "alpha" not in delta
    assert [(t.role, t.kind) for t in window.history][-1] == ("user", "retrieval")


def test_a_refreeze_keeps_answered_retrieval_deltas_and_a_compaction_drops_them_with_their_q() -> (
    None
):
    """Retrieval deltas are not deltas of the frozen block: they do not push the window to a
    re-freeze, a re-freeze keeps them (the cached prefix and what was retrieved hold), and
    they go once their question is folded away or when no question follows them yet."""
    window = Window(root="/r")
    window.freeze()
    for i in range(3):
        assert append_retrieval(window, retrieve_all([Lines("F", [f"fact {i}"])], "q", window))
        window.append_qa(f"question {i}?", f"answer {i}")
    assert append_retrieval(window, retrieve_all([Lines("F", ["fact next"])], "q", window))
    assert window.delta_chars() == 0  # nothing for a re-freeze to absorb
    before = list(window.history)
    window.freeze()
    assert list(window.history) == before[:-1]  # only the one with no question yet goes
    window.drop_turns([t for t in window.history if t.text in ("question 0?", "answer 0")])
    window.freeze()
    first = window.history[0]
    assert first.kind == "retrieval" and first.text.endswith("fact 1")  # fact 0's: gone too
    assert [t.kind for t in window.history].count("retrieval") == 2
    # What compaction plans against counts them: a freeze keeps them.
    held = sum(len(t.text) for t in window.history)
    assert window.refrozen_chars() == len(window.tree) + window.static_chars() + held


def test_empty_retrieval_appends_nothing_and_the_cap_holds() -> None:
    window = Window(root="/r")
    assert not append_retrieval(window, retrieve_all([Lines("S", [])], "q", window))
    big = [f"line {i} " + "x" * 200 for i in range(200)]
    retrieval = retrieve_all([Lines("S", big)], "q", window)
    assert 0 < retrieval.lines < len(big)
    assert sum(len(line) + 1 for p in retrieval.parts for line in p.lines) <= (
        C.RETRIEVAL_DELTA_MAX_CHARS
    )
    assert not retrieval.grounds


class Counting(Lines):
    def __init__(self, heading: str, lines: list[str]) -> None:
        super().__init__(heading, lines)
        self.asked = 0

    def retrieve(self, question: str, seen: Callable[[str], bool]) -> RetrievalPart | None:
        self.asked += 1
        return super().retrieve(question, seen)


def test_a_fork_appends_what_the_workspace_retrieved_and_asks_again_only_without_it() -> None:
    """The workspace asks the retrievers before it starts the fork (no hand-off to a worker
    thread and back on the I/O loop); the fork asks them itself only when it has no answer
    for its window as it is (a compaction changed it, the prompt-too-long retry)."""
    counting = Counting("Facts", ["Beta caches results"])
    window = Window(root="/r")
    window.freeze()
    job = QuestionJob("where is Beta?", window, (), 99.0, 500, "k", retrievers=(counting,))
    early = retrieve_all(job.retrievers, job.question, window)
    assert counting.asked == 1
    assert asyncio.run(retrieve_for_job(job, window, early)) is early
    assert counting.asked == 1  # not asked again
    assert [t.kind for t in window.history] == ["retrieval"]
    again = Window(root="/r")
    again.freeze()
    retrieval = asyncio.run(retrieve_for_job(job, again, None))
    assert counting.asked == 2 and retrieval.lines == 1
    assert "Beta caches results" in again.history[-1].text
