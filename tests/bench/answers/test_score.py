"""The answer scorer: recall by token, citations on the fact's lines, negatives, staleness."""

from __future__ import annotations

from bench.answers.question_set import Change, Fact, Question
from bench.answers.score import answer_body, citations, says_absent, score_answer

CONFIG = '"""Settings."""\nPORT = 8080\nRETRIES = 15\n'
FILES = {"app/config.py": CONFIG}
PORT = Fact(("8080",), "app/config.py", r"^PORT = ")
RETRIES = Fact(("5",), "app/config.py", r"^RETRIES = ")


def _read(path: str) -> str | None:
    return FILES.get(path)


def _question(*facts: Fact, kind: str = "default", **extra: object) -> Question:
    return Question("q", kind, "?", facts, **extra)  # type: ignore[arg-type]


def test_a_value_inside_a_longer_number_is_not_recalled() -> None:
    score = score_answer(_question(RETRIES), "RETRIES is 15.", read=_read)
    assert score.recalled == 0
    assert score_answer(_question(RETRIES), "It retries 5 times.", read=_read).recalled == 1


def test_numbers_in_the_trailer_and_notices_are_not_the_answer() -> None:
    text = (
        "I do not know.\n\n[unverified: answered before anything was read; 8080]\n---\n"
        "[live-memory] model=m tokens=8080/5(in/out) tool_calls=0"
    )
    assert answer_body(text) == "I do not know."
    assert score_answer(_question(PORT), text, read=_read).recalled == 0


def test_a_citation_is_precise_only_when_it_reaches_the_fact_line() -> None:
    near = score_answer(_question(PORT), "PORT is 8080 (app/config.py:2).", read=_read)
    assert (near.citations, near.precise_citations) == (1, 1)
    elsewhere = score_answer(
        _question(PORT), "PORT is 8080 (app/server.py:2, app/config.py:40-44).", read=_read
    )
    assert (elsewhere.citations, elsewhere.precise_citations) == (2, 0)


def test_structured_sources_are_scored_instead_of_the_text() -> None:
    sources = [{"path": "/repo/app/config.py", "start_line": 1, "end_line": 3}]
    score = score_answer(
        _question(PORT), "8080, see app/other.py:9", sources=sources, read=_read, root="/repo"
    )
    assert (score.citations, score.precise_citations) == (1, 1)
    assert citations("see a/b.py#L3-L7 and c.rst line 4", None)[0].end_line == 7


def test_a_negative_answered_with_a_location_is_a_hallucination() -> None:
    negative = _question(kind="negative", absent=("RetryPolicy",))
    invented = score_answer(negative, "RetryPolicy is defined in app/retry.py:12.", read=_read)
    assert invented.hallucinated
    refused = score_answer(negative, "There is no RetryPolicy in this repository.", read=_read)
    assert not refused.hallucinated
    for text in ("RetryPolicy does not exist.", "I couldn't find RetryPolicy anywhere."):
        assert says_absent(text), text


def test_a_freshness_answer_with_the_old_value_is_stale() -> None:
    fresh = _question(
        Fact(("9090",), "app/config.py", r"^PORT = "),
        kind="freshness",
        change=Change("edit", "app/config.py", "PORT = 8080", "PORT = 9090"),
        stale=("8080",),
    )
    assert score_answer(fresh, "PORT is 8080.", read=_read).stale
    assert not score_answer(fresh, "PORT is now 9090 (it was 8080).", read=_read).stale
    deleted = _question(
        kind="freshness", change=Change("delete", "app/config.py"), absent=("PORT",)
    )
    assert score_answer(deleted, "PORT is in app/config.py.", read=_read).stale
    assert not score_answer(deleted, "app/config.py was deleted.", read=_read).stale
