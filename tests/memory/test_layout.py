"""The prompt layout honours the KV-cache contract: every request's bytes up to its trailing
turn are a prefix of the next request's, between compactions; breakpoints sit where they should."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable

from live_memory.config import constants as C
from live_memory.memory.layout import Hints, build_request, render_trailing_turn, stable_prefix_text
from live_memory.memory.model import LedgerFact
from live_memory.memory.window import Window
from live_memory.providers.types import (
    Block,
    ChatRequest,
    Message,
    TextBlock,
    ToolCall,
    ToolResultBlock,
    ToolSpec,
)

ROOT = "/home/dev/project"
SYSTEM = "You are Live Memory."
TOOLS = (ToolSpec("Read", "read a file", {"type": "object"}),)


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def observe(window: Window, path: str, text: str) -> None:
    window.observe(path, text, sha(text), len(text))


def block_json(block: Block) -> object:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, ToolCall):
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.arguments}
    return {"type": "tool_result", "id": block.tool_call_id, "content": block.content}


def wire(request: ChatRequest) -> list[str]:
    """The request as the provider's cache sees it: one canonical string per element.

    Breakpoint markers are not content (they say where to cache, not what), so they are left out.
    """
    items = [json.dumps({"system": b.text}, sort_keys=True) for b in request.system]
    items += [
        json.dumps({"role": m.role, "content": [block_json(b) for b in m.blocks]}, sort_keys=True)
        for m in request.messages
    ]
    return items


def breakpoints(request: ChatRequest) -> list[str]:
    marks = [f"system[{i}]" for i, b in enumerate(request.system) if b.cache_breakpoint]
    marks += [f"messages[{i}]" for i, m in enumerate(request.messages) if m.cache_breakpoint]
    return marks


def ask(window: Window, question: str, loop: tuple[Message, ...] = ()) -> ChatRequest:
    """What the workspace does on admission: sync deltas, drain hints, build the request."""
    window.sync_deltas()
    hints = Hints(60.0, 2048, tuple(window.drain_recently_modified()))
    return build_request(
        window,
        system_prompt=SYSTEM,
        trailing=render_trailing_turn(question, hints),
        loop=loop,
        tools=TOOLS,
        model="m",
        max_tokens=2048,
    )


def ping(window: Window) -> ChatRequest:
    return build_request(
        window, system_prompt=SYSTEM, trailing=None, tools=TOOLS, model="m", max_tokens=1
    )


def assert_prefix(earlier: list[str], later: list[str]) -> None:
    assert later[: len(earlier)] == earlier
    assert "".join(later).encode().startswith("".join(earlier).encode())


def loaded_window() -> Window:
    window = Window(ROOT, tree="src/\n  a.py\n  b.py\ndocs/\n  guide.md")
    window.ledger = [LedgerFact("Parser lives in src/a.py", (("src/a.py", sha("A0")),))]
    window.observe("docs/guide.md", "GUIDE", sha("GUIDE"), 5, source="preloaded")
    observe(window, "src/a.py", "A0")
    window.record_read("src/b.py", sha("B0"), 2)
    window.freeze()
    return window


NOTIFICATIONS: list[Callable[[Window, int], object]] = [
    lambda w, i: observe(w, f"src/new{i}.py", f"new file {i}"),
    lambda w, i: observe(w, "src/a.py", f"A{i}"),
    lambda w, i: w.mark_stale("src/b.py"),
    lambda w, i: w.mark_deleted(f"src/new{i - 3}.py"),
    lambda w, i: w.note_modified("src/a.py"),
    lambda w, i: w.record_read(f"src/read{i}.py", sha(str(i)), 1),
    lambda w, i: None,
]


def test_each_request_up_to_its_trailing_turn_is_a_prefix_of_the_next() -> None:
    window = loaded_window()
    frozen = window.frozen
    previous: list[str] | None = None
    for i in range(14):
        NOTIFICATIONS[i % len(NOTIFICATIONS)](window, i)
        if i % 3 == 0:  # several notifications may land between two questions
            NOTIFICATIONS[(i + 2) % len(NOTIFICATIONS)](window, i)
        request = ask(window, f"question {i}?")
        items = wire(request)
        if previous is not None:
            assert_prefix(previous, items)
        trailing = request.messages[-1].blocks[0]
        assert isinstance(trailing, TextBlock)
        assert trailing.text.endswith(f"Question: question {i}?")
        previous = items[:-1]  # everything but the trailing turn
        window.append_qa(f"question {i}?", f"answer {i}")
        assert window.frozen == frozen
    deltas = "\n".join(t.text for t in window.history if t.kind == "observation")
    assert "new file 0" in deltas  # observe
    assert "- src/b.py — CHANGED" in deltas  # stale
    assert "- src/new0.py — DELETED" in deltas  # delete
    assert "- src/new7.py — DELETED" in deltas


def test_the_tool_loop_of_one_question_extends_its_own_request() -> None:
    window = loaded_window()
    first = ask(window, "where is the parser?")
    call = Message("assistant", (ToolCall("t1", "Read", {"file_path": "src/a.py"}),))
    result = Message("user", (ToolResultBlock("t1", "A0"),))
    second = ask(window, "where is the parser?", loop=(call, result))
    assert_prefix(wire(first), wire(second))
    call2 = Message("assistant", (ToolCall("t2", "Read", {"file_path": "src/b.py"}),))
    result2 = Message("user", (ToolResultBlock("t2", "B0"),))
    third = ask(window, "where is the parser?", loop=(call, result, call2, result2))
    assert_prefix(wire(second), wire(third))


def test_breakpoints_sit_on_both_system_blocks_the_last_history_and_last_loop_message() -> None:
    window = loaded_window()
    window.append_qa("q0", "a0")
    loop = (
        Message("assistant", (ToolCall("t1", "Read", {"file_path": "src/a.py"}),)),
        Message("user", (ToolResultBlock("t1", "A0"),)),
    )
    request = ask(window, "q1", loop=loop)
    # messages: q0, a0, trailing, tool call, tool result
    assert breakpoints(request) == ["system[0]", "system[1]", "messages[1]", "messages[4]"]
    assert len(breakpoints(request)) <= C.MAX_CACHE_BREAKPOINTS


def test_breakpoints_never_exceed_the_provider_limit_in_any_shape() -> None:
    window = Window(ROOT)
    assert breakpoints(ask(window, "first")) == ["system[0]", "system[1]"]
    window.append_qa("first", "answer")
    observe(window, "a.py", "A")
    for loop_len in range(6):
        loop = tuple(
            Message("assistant" if j % 2 == 0 else "user", (TextBlock(f"turn {j}"),))
            for j in range(loop_len)
        )
        request = ask(window, "again", loop=loop)
        assert len(breakpoints(request)) <= C.MAX_CACHE_BREAKPOINTS
        assert request.messages[-1].cache_breakpoint is (loop_len > 0)
    assert len(breakpoints(ping(window))) <= C.MAX_CACHE_BREAKPOINTS


def test_the_trailing_turn_is_never_marked_for_caching() -> None:
    window = loaded_window()
    window.append_qa("q0", "a0")
    request = ask(window, "q1")
    assert request.messages[-1].role == "user"
    assert request.messages[-1].cache_breakpoint is False
    assert request.messages[-2].cache_breakpoint is True


def test_keep_warm_ping_shares_the_prefix_of_the_last_question_and_the_next_one() -> None:
    window = loaded_window()
    window.append_qa("q0", "a0")
    last_question = ask(window, "q1")
    window.append_qa("q1", "a1")
    warm = ping(window)
    assert_prefix(wire(last_question)[:-1], wire(warm))
    assert warm.messages[-1].role == "user"
    assert warm.max_tokens == 1
    assert "messages[" + str(len(warm.messages) - 2) + "]" in breakpoints(warm)
    assert wire(ping(window)) == wire(warm)  # pings are byte-identical while nothing changes
    following = ask(window, "q2")
    assert_prefix(wire(warm)[:-1], wire(following))


def test_keep_warm_ping_on_an_empty_history_still_ends_on_a_user_turn() -> None:
    window = Window(ROOT)
    request = ping(window)
    assert window.frozen is not None  # building a request freezes an unfrozen window
    assert [m.role for m in request.messages] == ["user"]
    assert breakpoints(request) == ["system[0]", "system[1]"]


def test_volatile_hints_appear_only_in_the_trailing_turn() -> None:
    window = loaded_window()
    window.note_modified("src/b.py")
    request = ask(window, "what changed?")
    trailing = request.messages[-1].blocks[0]
    assert isinstance(trailing, TextBlock)
    hint = "recently modified by the coding agent since you last saw them: src/b.py"
    assert hint in trailing.text
    assert "time budget: about 60 s" in trailing.text
    assert "at most 2048 answer tokens" in trailing.text
    assert trailing.text.endswith("Question: what changed?")
    everything_else = wire(request)[:-1]
    assert not any("time budget" in item or "recently modified" in item for item in everything_else)
    window.append_qa("what changed?", "b.py")
    assert "recently modified" not in wire(ask(window, "next"))[-1]


def test_the_stable_block_carries_system_prompt_and_tree_and_survives_a_refreeze() -> None:
    window = loaded_window()
    before = ask(window, "q")
    assert before.system[0].text == stable_prefix_text(SYSTEM, window.tree)
    assert "## Directory tree of the workspace\nsrc/" in before.system[0].text
    assert before.system[1].text == window.frozen
    observe(window, "src/c.py", "C")
    window.freeze()  # a compaction re-freezes: block 2 changes, block 1 does not
    after = ask(window, "q")
    assert after.system[0] == before.system[0]
    assert after.system[1] != before.system[1]
    assert stable_prefix_text(SYSTEM, "").endswith("(empty)")


def test_request_carries_model_tools_budget_and_cache_key() -> None:
    window = loaded_window()
    request = build_request(
        window,
        system_prompt=SYSTEM,
        trailing="Question: x",
        tools=TOOLS,
        model="claude-haiku",
        max_tokens=512,
        cache_key="live-memory-abc",
        timeout_s=12.5,
    )
    assert (request.model, request.tools, request.max_tokens) == ("claude-haiku", TOOLS, 512)
    assert (request.cache_key, request.timeout_s) == ("live-memory-abc", 12.5)


def test_a_breakpoint_is_placed_only_where_the_prompt_reaches_the_minimum() -> None:
    window = Window(ROOT)
    window.freeze()
    for i in range(40):
        window.append_qa(f"question {i}: " + "x" * 200, f"answer {i}: " + "y" * 200)
    loop = (
        Message("assistant", (ToolCall("t1", "Read", {"file_path": "src/a.py"}),)),
        Message("user", (ToolResultBlock("t1", "z" * 40_000),)),
    )
    history = len(window.history)

    def marks(min_tokens: int) -> list[str]:
        window.sync_deltas()
        request = build_request(
            window,
            system_prompt=SYSTEM,
            trailing=render_trailing_turn("q", Hints(60.0, 2048)),
            loop=loop,
            tools=TOOLS,
            model="m",
            max_tokens=2048,
            min_cache_tokens=min_tokens,
        )
        return breakpoints(request)

    every = ["system[0]", "system[1]", f"messages[{history - 1}]", f"messages[{history + 2}]"]
    assert marks(0) == every
    # A short stable prefix gets no marker, yet the grown history and the tool loop do.
    assert marks(2_000) == every[2:]
    # Only the tool loop (its 40,000-character result) reaches this one.
    assert marks(8_000) == every[3:]
    assert marks(1_000_000) == []
