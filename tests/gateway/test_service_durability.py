"""Durable what was acknowledged: a real LiveMemoryService over the fake provider (HTTP),
its snapshots written by the real store through a writer that can refuse like a full disk."""

from __future__ import annotations

import asyncio
import errno
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from live_memory.atomic_file import write_atomically
from live_memory.config import Settings, load_settings
from live_memory.config import constants as C
from live_memory.errors import AnswerNotPersisted
from live_memory.gateway.service import LiveMemoryService
from live_memory.memory import Window, window_to_state
from live_memory.memory.snapshot_store import SnapshotStore
from tests.support.fakes import Error, FakeProvider, Text
from tests.support.repo import make_repo

APP = "def answer():\n    return 42\n"


class Disk:
    """The snapshot writer: the real atomic write, or ENOSPC while `full`."""

    def __init__(self) -> None:
        self.full = False
        self.refused = 0

    def write(self, path: Path, data: bytes, **options: bool) -> None:
        if self.full:
            self.refused += 1
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        write_atomically(path, data, **options)


@pytest.fixture
def fake() -> Iterator[FakeProvider]:
    with FakeProvider() as provider:
        yield provider


def _settings(tmp_path: Path, fake: FakeProvider, **extra: str) -> Settings:
    env = {
        "LIVE_MEMORY_DATA_DIR": str(tmp_path / "data"),
        "ANTHROPIC_API_KEY": "dummy-key",
        "ANTHROPIC_BASE_URL": fake.anthropic_base_url,
        **extra,
    }
    return load_settings(env, home=tmp_path)


async def _warm(service: LiveMemoryService, repo: Path) -> None:
    await service.clear(str(repo))
    event = {"path": "src/app.py", "kind": "read", "content": APP}
    assert (await service.notify({"cwd": str(repo), "events": [event]})).accepted == 1


def test_a_full_disk_never_reports_an_answer_persisted_that_is_not(
    tmp_path: Path, fake: FakeProvider
) -> None:
    repo = make_repo(tmp_path / "repo", {"src/app.py": APP})
    settings = _settings(tmp_path, fake)
    disk = Disk()
    fake.responder = lambda recorded: Text(f"answer {len(fake.requests)}")

    async def scenario() -> tuple[list[str], list[str], list[dict[str, object]]]:
        service = LiveMemoryService(
            settings, store=SnapshotStore(settings.snapshot_dir, write=disk.write)
        )
        acknowledged: list[str] = []
        refused: list[str] = []
        health: list[dict[str, object]] = []
        try:
            await _warm(service, repo)
            for i in range(6):
                disk.full = i in (2, 3)
                try:
                    acknowledged.append((await service.ask(f"q{i}?", str(repo))).answer)
                except AnswerNotPersisted as exc:
                    assert exc.answer_text.startswith("answer ")  # still given to the caller
                    refused.append(exc.answer_text)
                health.append(await service.health())
        finally:
            disk.full = False
            await service.shutdown()
        return acknowledged, refused, health

    acknowledged, refused, health = asyncio.run(scenario())
    assert len(acknowledged) == 4 and len(refused) == 2 and disk.refused >= 2
    assert [h["status"] for h in health] == ["ok", "ok", "degraded", "degraded", "ok", "ok"]
    assert "No space left" in str(health[2]["degraded_reason"])

    async def restarted() -> dict[str, object]:
        service = LiveMemoryService(settings)
        try:
            return await service.stats(str(repo))
        finally:
            await service.shutdown()

    stats = asyncio.run(restarted())
    saved = SnapshotStore(settings.snapshot_dir).load(repo)
    assert saved is not None
    kept = [str(t["text"]) for t in saved["history"]]  # type: ignore[union-attr]
    assert set(acknowledged) <= set(kept)  # every acknowledged answer survived the restart
    assert stats["questions_answered"] == 6


def test_what_the_hooks_taught_survives_a_restart(tmp_path: Path, fake: FakeProvider) -> None:
    """Fault 10: `file_contexts.loaded` went from 1 to 0 across a restart, because only
    adopted answers were snapshotted; the manifest (never the bytes) now is too."""
    repo = make_repo(tmp_path / "repo", {"src/app.py": APP})
    settings = _settings(tmp_path, fake)

    async def taught() -> dict[str, object]:
        service = LiveMemoryService(settings)
        try:
            await _warm(service, repo)
            return await service.stats(str(repo))
        finally:
            await service.shutdown()

    async def after_restart() -> dict[str, object]:
        service = LiveMemoryService(settings)
        try:
            return await service.stats(str(repo))
        finally:
            await service.shutdown()

    before = asyncio.run(taught())
    after = asyncio.run(after_restart())
    assert before["file_contexts"]["loaded"] == 1  # type: ignore[index]
    assert before["file_contexts"]["with_content"] == 1  # type: ignore[index]
    assert after["file_contexts"]["loaded"] == 1  # type: ignore[index]
    assert after["file_contexts"]["with_content"] == 0  # type: ignore[index]  # bytes never persisted


def test_a_notification_for_a_workspace_nobody_asked_about_creates_nothing(
    tmp_path: Path, fake: FakeProvider
) -> None:
    repo = make_repo(tmp_path / "repo", {"src/app.py": APP})
    settings = _settings(tmp_path, fake)

    async def scenario() -> tuple[int, int, int]:
        service = LiveMemoryService(settings)
        try:
            event = {"path": "src/app.py", "kind": "read", "content": APP}
            outcome = await service.notify({"cwd": str(repo), "events": [event, event]})
            active = (await service.health())["workspaces_active"]
            return outcome.accepted, outcome.ignored, int(str(active))
        finally:
            await service.shutdown()

    assert asyncio.run(scenario()) == (0, 2, 0)
    assert not SnapshotStore(settings.snapshot_dir).exists(repo)


def _sent_tokens(body: dict[str, object]) -> int:
    """A request's prompt as text (system, messages, tool definitions) / CHARS_PER_TOKEN."""
    system = body.get("system") or []
    chars = sum(len(b["text"]) for b in system) if isinstance(system, list) else len(str(system))
    for message in body.get("messages", []):  # type: ignore[attr-defined]
        content = message["content"]
        texts = [content] if isinstance(content, str) else [b.get("text", "") for b in content]
        chars += sum(len(str(t)) for t in texts)
    return int((chars + len(str(body.get("tools", "")))) / C.CHARS_PER_TOKEN)


def _snapshot_with_history(settings: Settings, repo: Path, pairs: int, answer_chars: int) -> None:
    """A snapshot as a server with a large window saves it: `pairs` Q/A turns."""
    window = Window(str(repo))
    for i in range(pairs):
        window.append_qa(f"question {i}?", f"answer {i}: " + "word " * (answer_chars // 5))
    SnapshotStore(settings.snapshot_dir).save(repo, window_to_state(window))


def _ask_after_restart(settings: Settings, repo: Path) -> tuple[str, dict[str, object]]:
    async def scenario() -> tuple[str, dict[str, object]]:
        service = LiveMemoryService(settings)
        try:
            answer = (await service.ask("What does answer() return?", str(repo))).answer
            return answer, await service.stats(str(repo))
        finally:
            await service.shutdown()

    return asyncio.run(scenario())


def test_a_window_saved_under_a_larger_limit_is_fitted_before_its_first_prompt(
    tmp_path: Path, fake: FakeProvider, caplog: pytest.LogCaptureFixture
) -> None:
    """Saved with ~45k tokens of history under a 150k window, restored under 30k: the first
    prompt the model receives is within 30k (it was sent at 45k when the summariser could not
    fold the history), and the newest turns are kept."""
    repo = make_repo(tmp_path / "repo", {"src/app.py": APP})
    _snapshot_with_history(_settings(tmp_path, fake), repo, pairs=40, answer_chars=4_500)
    settings = _settings(tmp_path, fake, LIVE_MEMORY_MAX_CONTEXT_TOKENS="30000")
    # No summary to be had: the history cannot be folded by a model call before the prompt.
    fake.responder = lambda recorded: (
        Text("It returns 42.") if recorded.body.get("tools") else Error(400, message="no")
    )
    with caplog.at_level(logging.WARNING, logger="live_memory.actors.workspace_loading"):
        answer, stats = _ask_after_restart(settings, repo)
    assert answer == "It returns 42."
    [first, *_] = [r.body for r in fake.requests if r.body.get("tools")]
    assert _sent_tokens(first) <= 30_000
    assert "answer 39:" in str(first["messages"]) and "answer 0:" not in str(first["messages"])
    assert "fitted to" in caplog.text
    assert stats["compactions"] == 0  # fitted on restore: no model call was needed for it


def test_a_tampered_oversized_snapshot_is_refused_and_the_server_answers(
    tmp_path: Path, fake: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A snapshot past SNAPSHOT_MAX_BYTES (a 100 MB history became one 26M-token prompt)
    is quarantined unread; the workspace starts empty and answers within its window."""
    monkeypatch.setattr(C, "SNAPSHOT_MAX_BYTES", 256 * 1024)
    repo = make_repo(tmp_path / "repo", {"src/app.py": APP})
    settings = _settings(tmp_path, fake, LIVE_MEMORY_MAX_CONTEXT_TOKENS="30000")
    _snapshot_with_history(settings, repo, pairs=4, answer_chars=100_000)
    fake.responder = lambda recorded: Text("It returns 42.")
    answer, stats = _ask_after_restart(settings, repo)
    assert answer == "It returns 42."
    [first, *_] = [r.body for r in fake.requests if r.body.get("tools")]
    assert _sent_tokens(first) <= 30_000 and "answer 3:" not in str(first["messages"])
    assert stats["questions_answered"] == 1
    quarantine = settings.snapshot_dir / "quarantine"
    assert [p.name.endswith(".oversized.json") for p in quarantine.iterdir()] == [True]


def test_notifications_past_the_backlog_cap_wait_for_the_workspace_to_apply_them(
    tmp_path: Path, fake: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hooks faster than the workspace actor piled their content up in its mailbox (8
    concurrent hooks of 96 KB reads: +240 MB, /stats timed out behind them): past the cap
    the edge waits for the actor to apply the batch, which confirms all told before it."""
    monkeypatch.setattr(C, "NOTIFY_BACKLOG_MAX_BYTES", 1024)
    repo = make_repo(tmp_path / "repo", {"src/app.py": APP})
    settings = _settings(tmp_path, fake)

    def body(i: int) -> dict[str, object]:
        event = {"path": f"src/f{i}.py", "kind": "read", "content": f"x = {i}\n" * 100}
        return {"cwd": str(repo), "events": [event]}

    async def scenario() -> tuple[list[object], int, object, dict[str, object]]:
        service = LiveMemoryService(settings)
        try:
            await service.clear(str(repo))
            told = [service.notify_held(body(i)) for i in range(3)]
            waited = (await service.notify(body(2))).accepted
            after = service.notify_held(body(3))
            return told, waited, after, await service.stats(str(repo))
        finally:
            await service.shutdown()

    told, waited, after, stats = asyncio.run(scenario())
    assert [outcome is not None for outcome in told] == [True, True, False]
    assert waited == 1 and after is not None  # applied, so the backlog was confirmed
    assert stats["file_contexts"]["loaded"] == 4  # type: ignore[index]
