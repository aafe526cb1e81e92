"""What an answer carries and what of it the memory keeps, through the real server."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest

from live_memory.config import constants as C
from tests.e2e.conftest import ensure_workspace, provider_env
from tests.e2e.test_concurrency_end_to_end import _warm
from tests.support import loopback
from tests.support.app_server import AppServer, RunningServer
from tests.support.fakes import FakeLocalServer, FakeProvider, Says, Text, ToolUse
from tests.support.mcp_client import call_tool_result
from tests.support.prompts import without_cache_control
from tests.support.repo import make_repo

pytestmark = pytest.mark.e2e


def _ask(server: RunningServer, repo: Path, question: str) -> dict[str, object]:
    reply = loopback.post(
        f"{server.url}/api/ask", json={"question": question, "cwd": str(repo)}, timeout=60
    )
    assert reply.status_code == 200, reply.text
    body: dict[str, object] = reply.json()
    return body


def test_a_timed_out_notice_never_enters_the_history_and_keeps_the_cached_prefix(
    fake: FakeProvider, repo: Path, tmp_path: Path
) -> None:
    gate = threading.Event()
    fake.script(Text("never sent in time", hold=gate))
    env = provider_env(fake, "anthropic") | {"LIVE_MEMORY_DEFAULT_TIMEOUT_S": "2"}
    with AppServer(tmp_path / "data", env) as server:
        _warm(server, repo)
        first = _ask(server, repo, "where is answer defined?")
        gate.set()
        second = _ask(server, repo, "what does answer return?")
    assert first["timed_out"] is True
    assert str(first["answer"]).startswith("[best-effort answer")
    assert second["timed_out"] is False
    before, after = (without_cache_control(r.body) for r in fake.requests[:2])
    assert "best-effort" not in str(after), "the notice reached the model as an answer"
    assert after["system"] == before["system"]
    prefix = before["messages"][:-1]
    assert after["messages"][: len(prefix)] == prefix


CITING = (
    "`answer` is defined in `src/app.py:1-2` and called from `src/cli.py:7`; "
    "the project is described in `README.md`."
)
EXPECTED = [
    {"path": "src/app.py", "start_line": 1, "end_line": 2, "checked": True, "seen": True},
    {"path": "src/cli.py", "start_line": 7, "end_line": 7, "checked": False, "seen": False},
    {"path": "README.md", "start_line": None, "end_line": None, "checked": True, "seen": False},
]


def test_answers_carry_their_checked_sources_over_rest_and_mcp(
    fake: FakeProvider, repo: Path, tmp_path: Path
) -> None:
    read = ToolUse("Read", {"file_path": "src/app.py"})
    fake.script(read, Text(CITING), read, Text(CITING))
    with AppServer(tmp_path / "data", provider_env(fake, "anthropic")) as server:
        ensure_workspace(server.url, repo)
        rest = _ask(server, repo, "where is answer defined?")
        mcp = call_tool_result(
            server.url, "ask_live_memory", {"question": "and again?", "cwd": str(repo)}
        )
    assert rest["sources"] == EXPECTED
    assert mcp.structured_content == {"text": mcp.content[0].text, "sources": EXPECTED}  # type: ignore[union-attr]
    for text in (str(rest["text"]), "".join(getattr(c, "text", "") for c in mcp.content)):
        assert "sources=3" in text.rsplit("---", 1)[1]  # the trailer counts them
        assert "[not found in the repository: src/cli.py:7]" in text
        assert "[unverified: README.md" in text


@pytest.mark.parametrize(("setting", "calls"), [("true", 2), ("false", 1)])
def test_the_cold_guard_follows_force_explore_when_cold(
    fake: FakeProvider, repo: Path, tmp_path: Path, setting: str, calls: int
) -> None:
    """A cold workspace (no held content, no symbol index): the guard forces a tool call
    after an ungrounded first answer; switched off, the first answer is the answer."""
    fake.responder = lambda recorded: Text("answer() returns 42.")
    env = provider_env(fake, "anthropic") | {
        "LIVE_MEMORY_FORCE_EXPLORE_WHEN_COLD": setting,
        "LIVE_MEMORY_SYMBOL_INDEX": "false",
    }
    with AppServer(tmp_path / "data", env) as server:
        ensure_workspace(server.url, repo)
        answer = _ask(server, repo, "what does answer return?")
        shown = server.request("GET", "/config").json()
    assert len(fake.requests) == calls
    assert str(answer["answer"]).startswith("answer() returns 42.")
    assert "[unverified: answered before" in str(answer["answer"]) or setting == "false"
    assert shown["settings"]["force_explore_when_cold"] is (setting == "true")
    assert shown["sources"]["force_explore_when_cold"] != "default"


INVENTED = (
    "Redirects stop at `DEFAULT_REDIRECT_LIMIT` (200), retried by `retry_with_backoff` "
    "around `answer`."
)


@pytest.mark.parametrize("corrected", [True, False], ids=["corrected", "marked"])
def test_names_the_repository_lacks_are_looked_for_again_once_then_marked(
    fake: FakeProvider, repo: Path, tmp_path: Path, corrected: bool
) -> None:
    """A warm workspace (held content: no cold guard): the answer's invented names are
    checked anyway; one more turn hints them, and what is still missing is marked."""
    second = "There is no redirect limit here: `answer` returns 42." if corrected else INVENTED
    fake.script(Text(INVENTED), Text(second))
    with AppServer(tmp_path / "data", provider_env(fake, "anthropic")) as server:
        _warm(server, repo)
        answer = str(_ask(server, repo, "how are redirects limited?")["answer"])
    assert len(fake.requests) == 2  # one more turn, bounded
    hint = str(fake.requests[1].body["messages"][-1]["content"])
    assert "`DEFAULT_REDIRECT_LIMIT`, `retry_with_backoff` is not defined" in hint
    assert "`answer`" not in hint  # found in src/app.py
    assert answer.startswith(second)
    marked = "[not found in the repository: `DEFAULT_REDIRECT_LIMIT`, `retry_with_backoff`]"
    assert (marked in answer) is not corrected


BUDGET_HINT = re.compile(r"\[time budget: about (\d+) s for this whole answer")


def test_the_first_question_after_new_content_gets_time_for_its_whole_prompt(
    tmp_path: Path,
) -> None:
    """A local server taught by warm follow-ups (a few hundred tokens re-evaluated a call)
    then sent a prompt with a new file in it: its budget covers one full prefill of that
    prompt and a minimal answer at the measured speeds, not what the past calls took."""
    prefill_tps, generate_tps = 40.0, 10.0
    repo = make_repo(tmp_path / "repo", {"src/app.py": "class ArgumentParser:\n    pass\n"})
    says = Says("`ArgumentParser` is defined in src/app.py:1.")
    with FakeLocalServer(prefill_tps=prefill_tps, generate_tps=generate_tps, default=says) as fake:
        env = {
            "LIVE_MEMORY_PROVIDER": "openai",
            "LIVE_MEMORY_BASE_URL": fake.openai_base_url,
            "LIVE_MEMORY_MODEL": fake.model,
        }
        with AppServer(tmp_path / "data", env) as server:
            _warm(server, repo)
            for i in range(4):
                _ask(server, repo, f"Which class parses options ({i})?")
            guide = "".join(f"Section {n}: options are parsed in order.\n" for n in range(120))
            event = {"path": "docs/guide.md", "kind": "read", "content": guide}
            loopback.post(
                f"{server.url}/notify", json={"cwd": str(repo), "events": [event]}
            ).raise_for_status()
            answer = _ask(server, repo, "What does the guide say about options?")
    assert answer["timed_out"] is False
    hint = BUDGET_HINT.search(str(fake.chat_requests[-1].body["messages"][-1]))
    assert hint is not None
    prompt_tokens = int(re.search(r"tokens=(\d+)/", str(answer["text"])).group(1))  # type: ignore[union-attr]
    full_prefill = prompt_tokens / prefill_tps
    assert full_prefill > C.DEFAULT_TIMEOUT_S  # what the budget was floored at before
    assert int(hint.group(1)) >= full_prefill, (hint.group(1), prompt_tokens)
