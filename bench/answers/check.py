"""Every key fact of a question set, checked against the repository at the pinned commit.

    python -m bench.answers check --repo pytest=/path/to/pytest

A fact holds when `grep` matches a line of `path` at the commit and one of its `any` strings is
on a matching line (or is the path, or a tail of it). A negative holds when no file at the
commit contains any of its `absent` names (case-insensitive). A freshness item is checked on
the changed tree: `old` occurs exactly once in `path` and the fact holds after the edit, the
stale strings were true before it; a deleted path existed and held its `absent` names.
"""

from __future__ import annotations

import re
from pathlib import Path

from bench.answers.question_set import Fact, Question, QuestionSet
from bench.answers.repo import git

__all__ = ["check_question_set", "fact_lines"]


def fact_lines(fact: Fact, text: str) -> list[int]:
    """1-based numbers of the lines of `text` that hold `fact` (empty: it does not hold)."""
    pattern = re.compile(fact.grep)
    lines = text.splitlines()
    matched = [n for n, line in enumerate(lines, 1) if pattern.search(line)]
    tail = {fact.path, *(fact.path.split("/", k)[-1] for k in range(fact.path.count("/") + 1))}
    if any(alternative in tail for alternative in fact.any):
        return matched
    return [n for n in matched if any(a in lines[n - 1] for a in fact.any)]


def _show(repo: Path, commit: str, path: str) -> str | None:
    out = git(repo, "show", f"{commit}:{path}", check=False)
    return out or None


def _holders(repo: Path, commit: str, name: str) -> list[str]:
    out = git(repo, "grep", "-l", "-i", "-F", "-e", name, commit, check=False)
    return [line.split(":", 1)[1] for line in out.splitlines() if ":" in line]


def _check_fact(repo: Path, commit: str, fact: Fact, text: str | None) -> str | None:
    text = _show(repo, commit, fact.path) if text is None else text
    if text is None:
        return f"{fact.path} does not exist at {commit[:12]}"
    if not fact_lines(fact, text):
        return f"{fact.path}: no line matches {fact.grep!r} with one of {list(fact.any)}"
    return None


def _check(repo: Path, commit: str, question: Question) -> list[str]:
    problems: list[str] = []
    change = question.change
    if change is not None:
        before = _show(repo, commit, change.path)
        if before is None:
            return [f"{change.path} does not exist at {commit[:12]}"]
        if change.kind == "delete":  # the question is about what the deleted file defined
            return [f"{change.path} lacks {n!r}" for n in question.absent if n not in before]
        if before.count(change.old) != 1:
            return [f"{change.path}: {change.old!r} does not occur exactly once"]
        after = before.replace(change.old, change.new)
        problems += [s for s in question.stale if s not in before]
        for fact in question.facts:
            problem = _check_fact(repo, commit, fact, after if fact.path == change.path else None)
            if problem:
                problems.append(problem)
        return problems
    for name in question.absent:
        holders = _holders(repo, commit, name)
        if holders:
            problems.append(f"{name!r} is not absent: {holders[:3]}")
    for fact in question.facts:
        problem = _check_fact(repo, commit, fact, None)
        if problem:
            problems.append(problem)
    return problems


def check_question_set(question_set: QuestionSet, repo: Path) -> dict[str, list[str]]:
    """Problems per question id (empty: every key fact holds at the pinned commit).

    Also checks that every `session_reads` path exists at the commit.
    """
    commit = question_set.commit
    problems = {q.id: _check(repo, commit, q) for q in question_set.questions}
    missing = [p for p in question_set.session_reads if _show(repo, commit, p) is None]
    if missing:
        problems["session_reads"] = [f"missing at {commit[:12]}: {missing}"]
    return {qid: found for qid, found in problems.items() if found}
