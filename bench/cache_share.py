"""Share of prompt tokens the provider can serve from its (simulated, prefix-matching) cache.

1. The real server (subprocess) + the fake provider, Anthropic wire:
   a. 20 questions with file notifications in between (default window): target >= 97%;
   b. 50 questions with notifications and a small window (compactions happen): target >= 90%.
2. The same 50-question session replayed in-process through the real Window and two request
   builders: the cache-stable layout (`memory.layout.build_request`) and a naive layout that
   re-renders the volatile block in place every question and puts the per-question hints in the
   system prompt — the figure "without the layout discipline".
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import _repo_root  # noqa: F401 (puts the repository root on sys.path for tests.support)
import httpx

from live_memory.agent.prompt import SYSTEM_PROMPT
from live_memory.config import constants as C
from live_memory.memory.compaction import Watermarks, drop_content, select_lru_content
from live_memory.memory.layout import Hints, build_request, render_trailing_turn
from live_memory.memory.window import Window
from live_memory.providers import min_cacheable_tokens
from live_memory.providers.anthropic_adapter import build_messages_params
from live_memory.providers.types import ChatRequest, SystemBlock
from live_memory.tools import Toolbox, build_directory_tree
from tests.support.fakes import FakeProvider, Recorded, Reply, Text, ToolUse
from tests.support.fakes.fake_anthropic_wire import prompt_of
from tests.support.fakes.fake_cache import PrefixCache, common_prefix_len
from tests.support.server_process import ServerProcess

SMALL_WINDOW = 12_000
MODEL = "claude-haiku-4-5"


TREE_FILES = 3000  # a mid-sized repository: its directory tree is most of the stable prefix


def _content(i: int) -> str:
    """A typical source file the agent reads between two questions (~1.5 KB)."""
    return "".join(f"def function_{i}_{n}(x):\n    return x * {n}\n" for n in range(40))


def _make_repo(repo: Path, questions: int) -> None:
    for n in range(TREE_FILES):
        folder = repo / "pkg" / f"area_{n % 40}" / f"part_{n % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"file_{n}.py").write_text(f"VALUE_{n} = {n}\n", encoding="utf-8")
    (repo / "src").mkdir(parents=True, exist_ok=True)
    for i in range(questions):
        (repo / "src" / f"module_{i}.py").write_text(_content(i), encoding="utf-8")


def _events(i: int) -> list[dict[str, str]]:
    """What the coding agent does between two questions: reads, writes, external edits."""
    events = [{"path": f"src/module_{i}.py", "kind": "read", "content": _content(i)}]
    if i % 3 == 1:
        events.append({"path": f"src/module_{i - 1}.py", "kind": "change"})
    if i % 5 == 4:
        events.append({"path": f"src/module_{i - 2}.py", "kind": "write", "content": _content(-i)})
    return events


def _responder(recorded: Recorded) -> Reply:
    if not recorded.body.get("tools"):
        return Text("[architecture] Module functions live in src/module_*.py.")
    messages = recorded.body["messages"]
    question = str(messages[-1]["content"])
    if "tool_result" not in question and "question 3" in question:
        return ToolUse("Grep", {"pattern": "function_3_1"})
    return Text("The function lives in src/module_3.py.")


def _server_session(questions: int, env_extra: dict[str, str]) -> tuple[float, float, int]:
    tmp = Path(tempfile.mkdtemp(prefix="lm-cache-"))
    repo = tmp / "repo"
    _make_repo(repo, questions)
    with FakeProvider() as fake:
        fake.responder = _responder
        env = {"ANTHROPIC_API_KEY": "dummy", "ANTHROPIC_BASE_URL": fake.anthropic_base_url}
        with ServerProcess(tmp / "data", env | env_extra) as server, httpx.Client(timeout=60) as c:
            # A notification alone creates no workspace; a clear does, without a model call.
            c.post(f"{server.url}/clear", json={"cwd": str(repo)}).raise_for_status()
            for i in range(questions):
                c.post(
                    f"{server.url}/notify", json={"cwd": str(repo), "events": _events(i)}
                ).raise_for_status()
                c.post(
                    f"{server.url}/api/ask", json={"question": f"question {i}?", "cwd": str(repo)}
                ).raise_for_status()
            stats = c.get(f"{server.url}/stats", params={"cwd": str(repo)}).json()
        prompts = [prompt_of(r.body)[0] for r in fake.requests]
        # A provider caches no prefix shorter than the model's minimum, whatever the layout.
        minimum_bytes = min_cacheable_tokens(MODEL) * C.CHARS_PER_TOKEN
        common = [
            max((common_prefix_len(p, q) for q in prompts[:i]), default=0)
            for i, p in enumerate(prompts)
        ]
        seen = sum(c for c in common if c >= minimum_bytes)
        ideal = seen / sum(len(p) for p in prompts)
        return fake.cache_stats().hit_ratio, ideal, int(stats["compactions"])


def _naive_request(window: Window, question: str, tools: tuple) -> ChatRequest:  # type: ignore[type-arg]
    """Re-render the volatile block in place each question; hints in the system prompt."""
    window.freeze()
    hints = render_trailing_turn(question, Hints(60.0 - len(window.history) % 7, 2048))
    request = build_request(
        window,
        system_prompt=SYSTEM_PROMPT,
        trailing=question,
        tools=tools,
        model=MODEL,
        max_tokens=2048,
    )
    system = (request.system[0], SystemBlock(request.system[1].text + "\n\n" + hints, True))
    return ChatRequest(MODEL, system, request.messages, tools, 2048)


def _replayed_share(questions: int, naive: bool) -> tuple[float, float]:
    window = Window(root="/bench")
    tmp = Path(tempfile.mkdtemp(prefix="lm-cache-tree-"))
    _make_repo(tmp, questions)
    window.tree = build_directory_tree(tmp, int(SMALL_WINDOW * 0.1 * 4))
    tools = Toolbox.specs()
    cache, prompt, cached, seen = PrefixCache(4.0), 0, 0, 0
    previous: list[bytes] = []
    marks = Watermarks(SMALL_WINDOW, 0.85, 0.6)
    for i in range(questions):
        for event in _events(i):
            path = event["path"]
            if event["kind"] in ("read", "write"):
                text = event["content"]
                window.observe(path, text, str(hash(text)), len(text))
            else:
                window.mark_stale(path)
        if window.estimated_tokens() > marks.trigger_tokens:
            drop_content(window, [c.path for c in select_lru_content(window, marks)])
            window.freeze()
        question = f"question {i}?"
        if naive:
            request = _naive_request(window, question, tools)
        else:
            window.sync_deltas()
            trailing = render_trailing_turn(question, Hints(60.0, 2048))
            request = build_request(
                window,
                system_prompt=SYSTEM_PROMPT,
                trailing=trailing,
                tools=tools,
                model=MODEL,
                max_tokens=2048,
            )
        body, markers = prompt_of(dict(build_messages_params(request)))
        usage = cache.anthropic(MODEL, body, markers)
        # The ideal: everything a previous prompt already sent could have been a cache hit.
        seen += max((common_prefix_len(body, p) for p in previous), default=0)
        previous.append(body)
        prompt += usage.prompt_tokens
        cached += usage.cache_read_input_tokens
        window.append_qa(question, "The function lives in src/module_3.py.")
    return cached / prompt, cache.tokens(seen) / prompt


def main() -> None:
    share20, ideal20, _ = _server_session(20, {})
    print(
        f"server, 20 questions + notifications: cache share {100 * share20:.1f}% "
        f"(ideal: every byte a previous prompt sent, in prefixes the model can cache = "
        f"{100 * ideal20:.1f}%; target >= 97%)"
    )
    share50, ideal50, compactions = _server_session(
        50, {"LIVE_MEMORY_MAX_CONTEXT_TOKENS": str(SMALL_WINDOW)}
    )
    print(
        f"server, 50 questions + notifications, {compactions} compaction(s): cache share "
        f"{100 * share50:.1f}% (ideal {100 * ideal50:.1f}%; target >= 90%)"
    )
    (disciplined, ideal), (naive, _) = _replayed_share(50, False), _replayed_share(50, True)
    print(
        f"replayed 50-question session (small window): cache-stable layout "
        f"{100 * disciplined:.1f}% (ideal for this session {100 * ideal:.1f}%) vs naive layout "
        f"{100 * naive:.1f}%"
    )


if __name__ == "__main__":
    main()
