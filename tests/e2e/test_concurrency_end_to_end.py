"""Admission, forks and optimistic commits through the real server."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import provider_env
from tests.support import loopback
from tests.support.app_server import AppServer, RunningServer
from tests.support.fakes import FakeProvider, Recorded, Reply, Text, ToolUse
from tests.support.mcp_client import abandon_tool_call, call_tool, list_tools

pytestmark = pytest.mark.e2e


def _warm(server: RunningServer, repo: Path) -> None:
    """Held file content, so the cold-memory guard does not add model calls."""
    event = {"path": "src/app.py", "kind": "read", "content": "def answer():\n    return 42\n"}
    # A notification alone creates no workspace: a clear does (no model call).
    loopback.post(f"{server.url}/clear", json={"cwd": str(repo)}, timeout=30).raise_for_status()
    reply = loopback.post(f"{server.url}/notify", json={"cwd": str(repo), "events": [event]})
    reply.raise_for_status()


def _load_provider(server: RunningServer, repo: Path) -> None:
    """One untimed question: the first model call also loads the provider's SDK."""
    reply = loopback.post(
        f"{server.url}/api/ask", json={"question": "warm-up?", "cwd": str(repo)}, timeout=60
    )
    assert reply.status_code == 200, reply.text


def _ask_all(server: RunningServer, repo: Path, questions: list[str]) -> list[httpx.Response]:
    replies: list[httpx.Response] = [None] * len(questions)  # type: ignore[list-item]

    def ask(i: int) -> None:
        replies[i] = loopback.post(
            f"{server.url}/api/ask",
            json={"question": questions[i], "cwd": str(repo)},
            timeout=60,
        )

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(len(questions))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return replies


@pytest.mark.parametrize("mode", ["parallel", "serial"])
def test_four_concurrent_questions_parallel_overlap_serial_queue(
    mode: str, fake: FakeProvider, repo: Path, tmp_path: Path
) -> None:
    held = threading.Event()  # every model reply waits for it: overlap is seen, not timed
    env = provider_env(fake, "anthropic") | {"LIVE_MEMORY_CONCURRENCY": mode}
    questions = [f"question {i}?" for i in range(4)]
    with AppServer(tmp_path / "data", env) as server:
        _warm(server, repo)
        _load_provider(server, repo)
        before = len(fake.requests)
        fake.responder = lambda recorded: Text("slow answer", hold=held)
        replies: list[httpx.Response] = []
        asking = threading.Thread(target=lambda: replies.extend(_ask_all(server, repo, questions)))
        asking.start()
        try:
            if mode == "parallel":  # all four reach the model before any is answered
                fake.wait_for_requests(before + 4, timeout_s=60)
            else:  # one at the model, three queued behind it
                _wait_for_queue(server, repo, in_flight=1, pending=3)
                assert len(fake.requests) == before + 1
        finally:
            held.set()
        asking.join(timeout=60)
        stats = server.request("GET", "/stats", params={"cwd": str(repo)}).json()
    assert len(replies) == 4 and all(r.status_code == 200 for r in replies), replies
    assert stats["questions_answered"] == 5
    if mode == "serial":
        assert stats["messages_retained"] == 10  # the warm-up and the four questions
        assert stats["commits"]["linear"] == 5


def _wait_for_queue(server: RunningServer, repo: Path, *, in_flight: int, pending: int) -> None:
    deadline = time.monotonic() + 60
    queue: dict[str, int] = {}
    while time.monotonic() < deadline:
        queue = server.request("GET", "/stats", params={"cwd": str(repo)}).json()["queue"]
        if queue == {"in_flight": in_flight, "pending": pending}:
            return
        time.sleep(0.05)  # polling the server's queue: the state is the event
    raise AssertionError(f"queue never reached {in_flight} in flight, {pending} pending: {queue}")


def test_race_the_fork_that_explored_more_wins_and_every_caller_gets_an_answer(
    fake: FakeProvider, repo: Path, tmp_path: Path
) -> None:
    def responder(recorded: Recorded) -> Reply:
        text = str(recorded.body["messages"])
        if "quick question" in text:
            return Text("quick answer", delay_s=0.3)
        if "tool_result" in text:
            return Text("explored answer", delay_s=0.3)
        return ToolUse("Read", {"file_path": "src/app.py"}, delay_s=0.3)

    fake.responder = responder
    with AppServer(tmp_path / "data", provider_env(fake, "anthropic")) as server:
        _warm(server, repo)
        replies = _ask_all(server, repo, ["quick question?", "deep question?"])
        stats = server.request("GET", "/stats", params={"cwd": str(repo)}).json()
    answers = sorted(r.json()["answer"] for r in replies)
    assert answers == ["explored answer", "quick answer"]
    assert stats["commits"] == {"linear": 1, "race_adopted": 1, "race_dropped": 0}
    assert stats["messages_retained"] == 2
    assert stats["file_contexts"]["loaded"] == 1


def test_race_loser_with_less_exploration_is_dropped_but_answered(
    fake: FakeProvider, repo: Path, tmp_path: Path
) -> None:
    def responder(recorded: Recorded) -> Reply:
        text = str(recorded.body["messages"])
        if "slow question" in text:
            return Text("slow answer", delay_s=1.0)
        if "tool_result" in text:
            return Text("explored answer")
        return ToolUse("Read", {"file_path": "src/app.py"})

    fake.responder = responder
    with AppServer(tmp_path / "data", provider_env(fake, "anthropic")) as server:
        _warm(server, repo)
        replies = _ask_all(server, repo, ["slow question?", "deep question?"])
        stats = server.request("GET", "/stats", params={"cwd": str(repo)}).json()
    assert sorted(r.json()["answer"] for r in replies) == ["explored answer", "slow answer"]
    assert stats["commits"] == {"linear": 1, "race_adopted": 0, "race_dropped": 1}


def test_actors_shows_the_workspace_and_its_fork_while_a_slow_question_runs(
    fake: FakeProvider, repo: Path, tmp_path: Path
) -> None:
    fake.responder = lambda recorded: Text("slow", delay_s=2.0)
    with AppServer(tmp_path / "data", provider_env(fake, "anthropic")) as server:
        _warm(server, repo)
        asker = threading.Thread(
            target=httpx.post,
            args=(f"{server.url}/api/ask",),
            kwargs={"json": {"question": "q?", "cwd": str(repo)}, "timeout": 30},
        )
        asker.start()
        fake.wait_for_requests(1, timeout_s=60)
        actors = server.request("GET", "/actors").json()
        asker.join(timeout=30)
    kinds = {a["kind"]: a for a in actors}
    assert {"gateway", "workspace", "fork", "keep_warm"} <= set(kinds)
    assert kinds["workspace"]["workspace"] == str(repo)
    assert kinds["fork"]["name"].startswith(str(repo))
    for actor in actors:
        assert {"mailbox_depth", "current_message", "busy_s", "processed", "failures"} <= set(actor)
        assert isinstance(actor["mailbox_depth"], int)


def test_async_tools_submit_then_collect_once(
    fake: FakeProvider, repo: Path, tmp_path: Path
) -> None:
    # Held until the first poll has seen it running (a 0.5 s delay lost that race at load 15).
    held = threading.Event()
    fake.responder = lambda recorded: Text("background answer", hold=held)
    env = provider_env(fake, "anthropic") | {"LIVE_MEMORY_ASYNC_TOOLS": "true"}
    with AppServer(tmp_path / "data", env) as server:
        _warm(server, repo)
        names = {t.name for t in list_tools(server.url)}
        assert {"ask_live_memory_submit", "ask_live_memory_result"} <= names
        is_error, text = call_tool(
            server.url, "ask_live_memory_submit", {"question": "q?", "cwd": str(repo)}
        )
        assert not is_error
        job_id = text.split()[0].removeprefix("job_id=")
        _, first = call_tool(server.url, "ask_live_memory_result", {"job_id": job_id})
        held.set()
        assert first == "[running]"
        fake.wait_for_requests(1, timeout_s=60)
        deadline = time.monotonic() + 60
        answer = first
        while answer == "[running]" and time.monotonic() < deadline:
            _, answer = call_tool(server.url, "ask_live_memory_result", {"job_id": job_id})
        assert answer.startswith("background answer")
        is_error, again = call_tool(server.url, "ask_live_memory_result", {"job_id": job_id})
        assert is_error and "unknown job id" in again
        is_error, bad = call_tool(
            server.url, "ask_live_memory_submit", {"question": "q?", "cwd": "relative"}
        )
        assert is_error and "absolute" in bad


def _give_up_over_rest(server: RunningServer, repo: Path) -> None:
    with pytest.raises(httpx.ReadTimeout):
        loopback.post(
            f"{server.url}/api/ask",
            json={"question": "q?", "cwd": str(repo)},
            timeout=httpx.Timeout(5.0, read=0.5),
        )


def _give_up_over_mcp(server: RunningServer, repo: Path) -> None:
    arguments = {"question": "q?", "cwd": str(repo)}
    abandon_tool_call(server.url, "ask_live_memory", arguments, after_s=0.5)


@pytest.mark.parametrize("give_up", [_give_up_over_rest, _give_up_over_mcp], ids=["rest", "mcp"])
def test_a_caller_that_goes_away_cancels_its_fork_and_its_model_calls(
    give_up: Callable[[AppServer, Path], None],
    fake: FakeProvider,
    repo: Path,
    tmp_path: Path,
) -> None:
    with AppServer(tmp_path / "data", provider_env(fake, "anthropic")) as server:
        _warm(server, repo)
        _load_provider(server, repo)
        fake.reset()
        fake.script(ToolUse("Read", {"file_path": "src/app.py"}, delay_s=1.5), Text("never asked"))
        give_up(server, repo)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            stats = server.request("GET", "/stats", params={"cwd": str(repo)}).json()
            forks = [a for a in server.request("GET", "/actors").json() if a["kind"] == "fork"]
            if stats["queue"]["in_flight"] == 0 and not forks:
                break
            time.sleep(0.1)
        assert stats["queue"]["in_flight"] == 0 and not forks
        # The first model reply has come and gone, and no fork is left to act on it.
        fake.wait_for_answers(1, timeout_s=60)
        assert len(fake.requests) == 1
        assert stats["questions_answered"] == 1  # the warm-up only
