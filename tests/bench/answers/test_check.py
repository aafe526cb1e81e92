"""The key-fact checker against a real git repository at its pinned commit."""

from __future__ import annotations

from pathlib import Path

from bench.answers.check import check_question_set
from bench.answers.question_set import Change, Fact, Question, QuestionSet
from tests.support.repo import git, make_repo

FILES = {"app/config.py": "PORT = 8080\n", "app/server.py": "class Server:\n    pass\n"}


def _set(repo: Path, *questions: Question, reads: tuple[str, ...] = ()) -> QuestionSet:
    commit = git(repo, "rev-parse", "HEAD").strip()
    return QuestionSet("t", "o/r", commit, reads, questions)


def test_facts_that_hold_at_the_commit_pass(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", FILES)
    question_set = _set(
        repo,
        Question("d", "definition", "?", (Fact(("server.py",), "app/server.py", "^class Server"),)),
        Question("v", "default", "?", (Fact(("8080",), "app/config.py", "^PORT ="),)),
        Question("n", "negative", "?", absent=("RetryPolicy",)),
        Question(
            "f",
            "freshness",
            "?",
            (Fact(("9090",), "app/config.py", "^PORT ="),),
            change=Change("edit", "app/config.py", "PORT = 8080", "PORT = 9090"),
            stale=("8080",),
        ),
        reads=("app/config.py",),
    )
    assert check_question_set(question_set, repo) == {}


def test_a_wrong_value_a_present_negative_and_a_later_edit_are_reported(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", FILES)
    question_set = _set(
        repo,
        Question("v", "default", "?", (Fact(("8000",), "app/config.py", "^PORT ="),)),
        Question("n", "negative", "?", absent=("server",)),
        Question("m", "where", "?", (Fact(("x",), "app/missing.py", "x"),)),
        reads=("app/gone.py",),
    )
    # Edits after the pinned commit are not what is checked.
    (repo / "app/config.py").write_text("PORT = 8000\n", encoding="utf-8")
    git(repo, "commit", "-qam", "later")
    question_set = QuestionSet("t", "o/r", git(repo, "rev-parse", "HEAD~1").strip(),
                               question_set.session_reads, question_set.questions)  # fmt: skip
    problems = check_question_set(question_set, repo)
    assert set(problems) == {"v", "n", "m", "session_reads"}
    assert "app/server.py" in problems["n"][0]
