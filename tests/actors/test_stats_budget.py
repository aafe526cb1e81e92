"""`/stats` before the first question: `used_tokens` is the prompt that question sends, so it
counts the stable tree (directory tree and core map) that the question would otherwise build
only as it starts. Real actors and the scripted fake provider over HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from live_memory.actors.workspace import WorkspaceActor
from live_memory.config import constants as C
from tests.actors.test_workspace_shell import WAIT_S, Harness
from tests.support.fakes import FakeProvider, Text

HEADING = "## Directory tree of the workspace\n"


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[tuple[Harness, FakeProvider]]:
    with FakeProvider() as fake:
        harness = Harness(tmp_path, fake, WorkspaceActor)
        try:
            yield harness, fake
        finally:
            harness.close()


def test_stats_before_the_first_question_counts_the_tree_that_question_sends(
    harness: tuple[Harness, FakeProvider],
) -> None:
    workspace, fake = harness
    docs = workspace.root / "docs"  # prose only: no core map, so the index cannot move the tree
    docs.mkdir()
    for i in range(300):
        (docs / f"chapter_{i:03d}_of_the_guide.md").write_text(f"# Chapter {i}\n", "utf-8")
    workspace.warm()
    before = workspace.stats()
    fake.responder = lambda recorded: Text("It returns 42.")
    assert workspace.ask("What does answer() return?").result(WAIT_S).answer == "It returns 42."

    (call,) = [r for r in fake.requests if r.body.get("tools")]
    (stable,) = [b["text"] for b in call.body["system"] if HEADING in b["text"]]
    tree = stable.split(HEADING, 1)[1]
    assert "docs/" in tree and "chapter_299_of_the_guide.md" in tree
    # Before the fix /stats left the tree out until the question built it: ~20 tokens here.
    assert before["context"]["used_tokens"] >= int(len(tree) / C.CHARS_PER_TOKEN)
