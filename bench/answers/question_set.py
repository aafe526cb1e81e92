"""A question set: the repository and commit it was written for, and questions reduced to
checkable key facts.

    {"repository": "pytest-dev/pytest", "commit": "<40 hex>",
     "session_reads": ["src/_pytest/main.py", ...],     # what a recorded agent session read
     "questions": [
       {"id": "pt-01", "kind": "definition", "question": "Where is ... defined?",
        "facts": [{"any": ["pytester.py"], "path": "src/_pytest/pytester.py",
                   "grep": "^class Pytester\\b"}]},
       {"id": "pt-31", "kind": "negative", "question": "...", "absent": ["retry_failed"]},
       {"id": "pt-33", "kind": "freshness", "question": "...",
        "change": {"kind": "edit", "path": "...", "old": "= 240", "new": "= 512"},
        "facts": [{"any": ["512"], "path": "...", "grep": "= 512"}], "stale": ["240"]}]}

A fact is recalled when the answer contains any of `any`; it is held by the lines of `path`
that match `grep` (a citation is precise when it names `path` and its lines reach one of them).
A negative's right answer says the thing does not exist (`absent`: names that no file of the
repository contains). A freshness item is asked after its `change` was applied: `edit`
(replace `old` by `new` in `path`), `delete` (remove `path`; the right answer says it is gone,
like a negative) or `branch` (the edit committed on a new branch that is then checked out).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "KINDS",
    "Change",
    "Fact",
    "Question",
    "QuestionSet",
    "load_question_set",
]

KINDS = frozenset(
    {"where", "what", "how", "why", "definition", "default", "call-site", "negative", "freshness"}
)
MIN_NEGATIVE_SHARE = 0.15
MIN_FRESHNESS_SHARE = 0.10
ChangeKind = Literal["edit", "delete", "branch"]


@dataclass(frozen=True, slots=True)
class Fact:
    any: tuple[str, ...]
    path: str
    grep: str

    def recalled_in(self, answer: str) -> bool:
        folded = answer.casefold()
        return any(alternative.casefold() in folded for alternative in self.any)


@dataclass(frozen=True, slots=True)
class Change:
    kind: ChangeKind
    path: str
    old: str = ""
    new: str = ""


@dataclass(frozen=True, slots=True)
class Question:
    id: str
    kind: str
    question: str
    facts: tuple[Fact, ...] = ()
    absent: tuple[str, ...] = ()
    change: Change | None = None
    stale: tuple[str, ...] = ()

    @property
    def expects_absence(self) -> bool:
        """The right answer says the thing is not there (a negative, a deleted file)."""
        return self.kind == "negative" or (self.change is not None and self.change.kind == "delete")


@dataclass(frozen=True, slots=True)
class QuestionSet:
    name: str
    repository: str
    commit: str
    session_reads: tuple[str, ...]
    questions: tuple[Question, ...]

    def share(self, kind: str) -> float:
        return sum(q.kind == kind for q in self.questions) / max(1, len(self.questions))


def _strings(value: Any, field: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ValueError(f"{field} must be a list of non-empty strings")
    return tuple(value)


def _question(raw: dict[str, Any]) -> Question:
    qid = str(raw.get("id", ""))
    kind = raw.get("kind")
    if kind not in KINDS:
        raise ValueError(f"{qid}: kind must be one of {sorted(KINDS)}, got {kind!r}")
    facts = tuple(
        Fact(_strings(f["any"], f"{qid}.any"), str(f["path"]), str(f["grep"]))
        for f in raw.get("facts", [])
    )
    for fact in facts:
        re.compile(fact.grep)
    change = None
    if "change" in raw:
        c = raw["change"]
        if c.get("kind") not in ("edit", "delete", "branch"):
            raise ValueError(f"{qid}: change.kind must be edit, delete or branch")
        change = Change(c["kind"], str(c["path"]), str(c.get("old", "")), str(c.get("new", "")))
    question = Question(
        qid,
        kind,
        str(raw["question"]),
        facts,
        _strings(raw.get("absent", []), f"{qid}.absent") if raw.get("absent") else (),
        change,
        _strings(raw.get("stale", []), f"{qid}.stale") if raw.get("stale") else (),
    )
    if (kind == "freshness") != (change is not None):
        raise ValueError(f"{qid}: a freshness item and only it carries a change")
    if question.expects_absence and not question.absent:
        raise ValueError(f"{qid}: a negative names what is absent (`absent`)")
    if not question.expects_absence and not facts:
        raise ValueError(f"{qid}: a question needs at least one key fact")
    return question


def load_question_set(path: Path, *, minimum: int = 30) -> QuestionSet:
    """Load and validate one question file.

    Raises ValueError for a malformed set, one with fewer than `minimum` questions, under 15 %
    negatives or under 10 % freshness items, or duplicate ids.
    """
    raw = json.loads(path.read_text(encoding="utf-8"))
    questions = tuple(_question(q) for q in raw["questions"])
    ids = [q.id for q in questions]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{path.name}: duplicate question ids")
    commit = str(raw["commit"])
    if not re.fullmatch(r"[0-9a-f]{40}", commit):
        raise ValueError(f"{path.name}: commit must be 40 hex digits")
    result = QuestionSet(
        path.stem,
        str(raw["repository"]),
        commit,
        _strings(raw.get("session_reads", []), "session_reads"),
        questions,
    )
    if len(questions) < minimum:
        raise ValueError(f"{path.name}: {len(questions)} questions, at least {minimum} needed")
    if result.share("negative") < MIN_NEGATIVE_SHARE:
        raise ValueError(f"{path.name}: under {MIN_NEGATIVE_SHARE:.0%} negatives")
    if result.share("freshness") < MIN_FRESHNESS_SHARE:
        raise ValueError(f"{path.name}: under {MIN_FRESHNESS_SHARE:.0%} freshness items")
    return result
