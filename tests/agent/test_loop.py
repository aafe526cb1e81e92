"""The agent loop against the real Anthropic adapter and the fake provider over HTTP."""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from live_memory.agent.loop import LoopLimits, LoopResult, run_agent_loop
from live_memory.memory.window import Window
from live_memory.providers import AnthropicProvider, OpenAIProvider
from live_memory.tools import Toolbox, ToolOutcome
from tests.support.fakes import Call, FakeProvider, Text, ToolUse


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeProvider]:
    with FakeProvider() as provider:
        yield provider


@pytest.fixture(autouse=True)
def _fresh(fake: FakeProvider) -> None:
    fake.reset()


def _run(
    fake: FakeProvider,
    root: Path,
    window: Window,
    *,
    budget_s: float = 30.0,
    toolbox: Toolbox | None = None,
    **limits: object,
) -> LoopResult:
    async def go() -> LoopResult:
        provider = AnthropicProvider(fake.anthropic_base_url, "dummy")
        try:
            return await run_agent_loop(
                provider,
                window,
                "Question: where is answer?",
                toolbox=toolbox or Toolbox(root),
                model="claude-haiku-4-5",
                system_prompt="system",
                limits=LoopLimits(
                    soft_deadline=time.monotonic() + budget_s,
                    max_answer_tokens=256,
                    **limits,  # type: ignore[arg-type]
                ),
            )
        finally:
            await provider.aclose()

    return asyncio.run(go())


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "app.py").write_text("def answer():\n    return 42\n", encoding="utf-8")
    return tmp_path


def test_cold_memory_rejects_an_ungrounded_first_answer_once_and_forces_a_tool(
    fake: FakeProvider, root: Path
) -> None:
    fake.script(Text("guess"), ToolUse("Read", {"file_path": "app.py"}), Text("app.py returns 42"))
    result = _run(fake, root, Window(str(root)))
    assert result.answer == "app.py returns 42"
    assert result.tool_calls == 1 and result.files_read == 1
    bodies = [r.body for r in fake.requests]
    assert "tool_choice" not in bodies[0]
    assert bodies[1]["tool_choice"] == {"type": "any"}
    assert "tool_choice" not in bodies[2]


def test_warm_memory_answers_without_tools(fake: FakeProvider, root: Path) -> None:
    window = Window(str(root))
    window.observe("app.py", "def answer():\n    return 42\n", "f" * 64, 28)
    fake.script(Text("app.py returns 42"))
    result = _run(fake, root, window)
    assert (result.answer, result.tool_calls, len(fake.requests)) == ("app.py returns 42", 0, 1)


def test_tool_failures_are_results_the_model_sees(fake: FakeProvider, root: Path) -> None:
    fake.script(
        ToolUse("Read", {"file_path": "missing.py"}),
        ToolUse("NoSuchTool", {}),
        Text("done"),
    )
    result = _run(fake, root, Window(str(root)))
    assert result.answer == "done" and result.stop_reason == "answered"
    results = [
        block
        for message in fake.requests[-1].body["messages"]
        for block in (message["content"] if isinstance(message["content"], list) else [])
        if block.get("type") == "tool_result"
    ]
    assert len(results) == 2 and all(block["is_error"] for block in results)


def test_iteration_cap_ends_with_a_final_answer_turn(fake: FakeProvider, root: Path) -> None:
    fake.responder = lambda _: ToolUse("Glob", {"pattern": "*.py"})
    result = _run(fake, root, Window(str(root)), max_iterations=3)
    assert result.stop_reason == "max_iterations"
    assert result.iterations == 4
    assert "Stop exploring now" in str(fake.requests[-1].body["messages"][-1])
    roles = [m["role"] for m in fake.requests[-1].body["messages"]]
    assert all(a != b for a, b in itertools.pairwise(roles))


def test_soft_deadline_returns_a_best_effort_answer_marked_timed_out(
    fake: FakeProvider, root: Path
) -> None:
    fake.script(ToolUse("Read", {"file_path": "app.py"}), Text("late", delay_s=5))
    result = _run(fake, root, Window(str(root)), budget_s=1.5)
    assert result.timed_out
    assert result.answer.startswith("[best-effort answer")
    assert "app.py" in result.answer


class _SlowDisk(Toolbox):
    """The real toolbox on a slow disk: every tool call takes `delay_s` (a network mount)
    or until `release` is set."""

    def __init__(self, root: Path, delay_s: float) -> None:
        super().__init__(root)
        self.delay_s = delay_s
        self.started = 0
        self.release = threading.Event()

    def run(self, name: str, arguments: Mapping[str, object]) -> ToolOutcome:
        self.started += 1
        self.release.wait(self.delay_s)
        return super().run(name, arguments)


@pytest.mark.parametrize(("calls", "delay_s"), [(15, 0.5), (1, 60.0)])
def test_the_soft_deadline_holds_between_and_during_slow_tool_calls(
    fake: FakeProvider, root: Path, calls: int, delay_s: float
) -> None:
    """Many slow reads in one turn, or one read that hangs: a best-effort answer at the soft
    deadline either way, not after the tools (15 x 0.5 s would be 7.5 s past a 2 s budget)."""
    reads = [Call("Read", {"file_path": "app.py"})] * calls
    fake.script(ToolUse.several(*reads, text="Reading app.py."), Text("never asked"))
    toolbox = _SlowDisk(root, delay_s)
    budget_s = 2.0

    async def go() -> tuple[LoopResult, float]:
        provider = AnthropicProvider(fake.anthropic_base_url, "dummy")
        started = time.monotonic()
        try:
            result = await run_agent_loop(
                provider,
                Window(str(root)),
                "Question: where is answer?",
                toolbox=toolbox,
                model="claude-haiku-4-5",
                system_prompt="system",
                limits=LoopLimits(soft_deadline=started + budget_s, max_answer_tokens=256),
            )
            return result, time.monotonic() - started
        finally:
            toolbox.release.set()  # the abandoned worker thread ends now, not in 60 s
            await provider.aclose()

    result, elapsed = asyncio.run(go())
    assert result.timed_out and result.answer.startswith("[best-effort answer")
    assert "Reading app.py." in result.answer
    # Generous for a loaded machine, and still below the 15 x 0.5 s the reads would take.
    assert elapsed < budget_s + 4.0, elapsed
    assert toolbox.started < calls or calls == 1
    assert len(fake.requests) == 1  # no model call after the deadline


def test_tool_results_over_the_question_budget_are_truncated_with_a_notice(
    fake: FakeProvider, root: Path
) -> None:
    (root / "big.txt").write_text(("x" * 99 + "\n") * 400, encoding="utf-8")
    fake.script(ToolUse("Read", {"file_path": "big.txt"}), Text("ok"))
    _run(fake, root, Window(str(root)), tool_result_token_budget=1000)
    last = str(fake.requests[-1].body["messages"])
    assert "tool-result budget is used up" in last
    assert last.count("x") < 6000


def test_a_local_model_writing_tool_calls_as_text_drives_a_grounded_loop(
    fake: FakeProvider, root: Path
) -> None:
    fake.script(
        Text('{"name": "Grep", "arguments": {"pattern": "def answer"}}'),
        Text('```json\n{"name": "Read", "arguments": "{\\"file_path\\": \\"app.py\\"}"}\n```'),
        Text("answer() in app.py returns 42."),
    )

    async def go() -> LoopResult:
        provider = OpenAIProvider(fake.openai_base_url, "dummy")
        try:
            return await run_agent_loop(
                provider,
                Window(str(root)),
                "Question: where is answer?",
                toolbox=Toolbox(root),
                model="llama-3.1-8b",
                system_prompt="system",
                limits=LoopLimits(soft_deadline=time.monotonic() + 30, max_answer_tokens=256),
            )
        finally:
            await provider.aclose()

    result = asyncio.run(go())
    assert result.answer == "answer() in app.py returns 42."
    assert result.tool_calls == 2 and result.files_read == 1
    messages = fake.requests[-1].body["messages"]
    assert [m["role"] for m in messages[-4:]] == ["assistant", "tool", "assistant", "tool"]
    assert all(m.get("content") == "" for m in messages if m["role"] == "assistant")
    assert "return 42" in messages[-1]["content"]
