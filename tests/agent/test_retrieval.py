"""The retrieval delta: one observation turn, only unseen lines, within its cap."""

from __future__ import annotations

from collections.abc import Callable

from live_memory.agent import RetrievalPart, append_retrieval, retrieve_all
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
    assert [(t.role, t.kind) for t in window.history][-1] == ("user", "observation")


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
