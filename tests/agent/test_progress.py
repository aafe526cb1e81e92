"""The progress board and its pacing (pure: no threads, no clock of its own)."""

from __future__ import annotations

from live_memory.agent import ProgressPacer, QuestionProgress
from live_memory.config import constants as C


def test_the_board_says_what_happens_now_then_what_happened() -> None:
    board = QuestionProgress()
    assert board.describe() == "starting"
    tap = board.model_call()
    assert board.describe() == "model call 1: waiting for the first token (prompt evaluation)"
    tap.add_text("x" * 40)
    assert board.describe() == "model call 1: ~10 tokens streamed so far"
    board.tool("Grep")
    assert board.describe() == (
        "running Grep (tool call 1, after model call 1); 1 tool call(s): Grep; "
        "~10 tokens streamed in all"
    )
    board.model_call().add_text("y" * 8)
    assert board.describe() == (
        "model call 2: ~2 tokens streamed so far; 1 tool call(s): Grep; ~12 tokens streamed in all"
    )
    assert tap.text == "x" * 40  # still a stream tap: the loop keeps the partial answer


def test_tool_names_are_bounded() -> None:
    board = QuestionProgress()
    for i in range(C.PROGRESS_TOOL_NAMES + 5):
        board.tool(f"T{i}" + "x" * 500)
    snap = board.snapshot()
    assert len(snap.tools_run) == C.PROGRESS_TOOL_NAMES
    assert all(len(n) <= C.PROGRESS_TOOL_NAME_MAX_CHARS for n in snap.tools_run)
    assert snap.tool_count == C.PROGRESS_TOOL_NAMES + 5


def test_the_listener_is_called_once_per_read() -> None:
    board = QuestionProgress()
    calls: list[int] = []
    board.watch(lambda: calls.append(1))
    tap = board.model_call()
    for _ in range(100):
        tap.add_text("token")
    assert calls == [1]
    board.snapshot()
    tap.add_text("more")
    assert calls == [1, 1]


def test_the_pacer_reports_steps_soon_streams_sometimes_and_beats_otherwise() -> None:
    board, pacer = QuestionProgress(), ProgressPacer()
    first = board.snapshot()
    assert pacer.due_in(first, 100.0) == 0.0  # the first report at once
    pacer.sent(first, 100.0)
    assert pacer.due_in(board.snapshot(), 100.0) == C.PROGRESS_HEARTBEAT_S
    tap = board.model_call()  # a new step: due after the short gap
    assert pacer.due_in(board.snapshot(), 100.25) == C.PROGRESS_MIN_INTERVAL_S - 0.25
    assert pacer.pending(board.snapshot())
    pacer.sent(board.snapshot(), 101.0)
    tap.add_text("tokens")  # only tokens: due after the stream interval
    assert pacer.due_in(board.snapshot(), 101.0) == C.PROGRESS_STREAM_INTERVAL_S
    for _ in range(C.PROGRESS_MAX_REPORTS):
        pacer.sent(board.snapshot(), 102.0)
    board.tool("Read")  # past the cap: only the heartbeat
    assert pacer.due_in(board.snapshot(), 102.0) == C.PROGRESS_HEARTBEAT_S
