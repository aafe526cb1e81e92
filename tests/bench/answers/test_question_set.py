"""The committed question sets meet the benchmark's quotas; malformed sets are refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.answers.question_set import load_question_set

QUESTIONS = Path(__file__).resolve().parents[3] / "bench" / "answers" / "questions"


def test_every_committed_set_has_30_questions_15_pct_negatives_and_10_pct_freshness() -> None:
    sets = [load_question_set(path) for path in sorted(QUESTIONS.glob("*.json"))]
    assert len(sets) >= 2
    for question_set in sets:
        kinds = {q.kind for q in question_set.questions}
        assert {"where", "what", "how", "why", "definition", "default", "call-site"} <= kinds
        assert {q.change.kind for q in question_set.questions if q.change} == {
            "edit",
            "delete",
            "branch",
        }


def _write(tmp_path: Path, questions: list[dict[str, object]]) -> Path:
    path = tmp_path / "set.json"
    body = {"repository": "o/r", "commit": "a" * 40, "questions": questions}
    path.write_text(json.dumps(body), encoding="utf-8")
    return path


FACT = {"any": ["x"], "path": "x.py", "grep": "x"}


def test_a_set_without_enough_negatives_is_refused(tmp_path: Path) -> None:
    plain = [{"id": f"q{i}", "kind": "what", "question": "?", "facts": [FACT]} for i in range(9)]
    fresh = {
        "id": "f",
        "kind": "freshness",
        "question": "?",
        "facts": [FACT],
        "change": {"kind": "edit", "path": "x.py", "old": "a", "new": "b"},
    }
    with pytest.raises(ValueError, match="negatives"):
        load_question_set(_write(tmp_path, [*plain, fresh]), minimum=3)


def test_a_question_without_key_facts_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="key fact"):
        load_question_set(_write(tmp_path, [{"id": "q", "kind": "what", "question": "?"}]))
