"""The whole harness against the replaying fake of llama-server: a tiny repository made here,
four questions, every arm. The fake answers as a model that reads the file would, so a change
the harness failed to apply (or to undo) shows as a wrong answer."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bench.answers.harness import ARMS, Endpoint, Options, run_benchmark
from bench.answers.question_set import Change, Fact, Question, QuestionSet
from bench.answers.report import write_report
from bench.answers.summary import summarize
from tests.support.fakes import FakeLocalServer, Recorded, Says
from tests.support.repo import git, make_repo

pytestmark = pytest.mark.e2e

FILES = {
    "app/__init__.py": "",
    "app/config.py": '"""Settings."""\nPORT = 8080\nHOST = "127.0.0.1"\n',
    "app/server.py": "from app.config import PORT\n\n\nclass Server:\n    port = PORT\n",
}
QUESTIONS = (
    Question("d", "definition", "Where is class Server defined?",
             (Fact(("app/server.py",), "app/server.py", r"^class Server:"),)),
    Question("v", "default", "What is the default PORT?",
             (Fact(("8080",), "app/config.py", r"^PORT = "),)),
    Question("n", "negative", "Where is RetryPolicy defined?", absent=("RetryPolicy",)),
    Question("f", "freshness", "What is PORT now?",
             (Fact(("9090",), "app/config.py", r"^PORT = 9090"),),
             change=Change("edit", "app/config.py", "PORT = 8080", "PORT = 9090"),
             stale=("8080",)),
)  # fmt: skip


def _last_user_text(request: Recorded) -> str:
    for message in reversed(request.body.get("messages", [])):
        if message.get("role") == "user":
            content = message.get("content")
            return content if isinstance(content, str) else str(content)
    return ""


def _reading_model(copy: Path) -> object:
    """Answers from the work copy as it stands when asked, citing the line it read."""

    def respond(request: Recorded) -> Says:
        asked = _last_user_text(request)
        if "RetryPolicy" in asked:
            return Says("RetryPolicy does not exist in this repository.")
        if "class Server" in asked:
            return Says("class Server is defined in app/server.py:4.")
        port = re.search(r"^PORT = (\d+)", (copy / "app/config.py").read_text(), re.M)
        return Says(f"PORT is {port[1] if port else '?'}, set in app/config.py:2.")

    return respond


def test_every_arm_runs_and_scores_against_the_fake(tmp_path: Path) -> None:
    source = make_repo(tmp_path / "source", FILES)
    commit = git(source, "rev-parse", "HEAD").strip()
    question_set = QuestionSet("tiny", "local/tiny", commit, ("app/config.py",), QUESTIONS)
    work = tmp_path / "work"
    with FakeLocalServer(flavour="llama-server", n_ctx=16384) as fake:
        respond = _reading_model(work / "repo-tiny")

        def fresh() -> None:
            fake.reset()  # an empty slot, as each arm starts; the reset forgets the responder
            fake.responder = respond  # type: ignore[assignment]

        endpoint = Endpoint(
            fake.openai_base_url, fake.model, lambda: len(fake.chat_requests), fresh, {}
        )
        options = Options(arms=ARMS, seeds=(1,), workdir=work, compaction_tokens=2048)
        records = run_benchmark([(question_set, source)], endpoint, options)
    assert [r.arm for r in records] == [arm for arm in ARMS for _ in QUESTIONS]
    assert [r.qid for r in records if r.freshness] == ["f"] * len(ARMS)  # asked last
    for summary in summarize(records, ARMS):
        assert summary.values["recall"] == 1.0, summary
        assert summary.values["citation_precision"] == 1.0, summary
        assert summary.values["hallucination"] == 0.0
        assert summary.values["staleness"] == 0.0
        assert (summary.values["calls"] or 0) >= 1
    cold = [r for r in records if r.arm == "cold"]
    assert cold[1].new_prompt_tokens < cold[1].prompt_tokens  # the slot's cache was reused
    assert (source / "app/config.py").read_text() == FILES["app/config.py"]  # never touched
    results = write_report(records, ARMS, tmp_path / "out", ["- test"])
    assert "| restart | 4 (1) | 100 %" in results.read_text()
    assert (tmp_path / "out" / "chart.png").stat().st_size > 0
