"""The workspace shell under faults, on real actors and the scripted fake provider over HTTP:
a late reply, a failing handler, a failing spend record, a broken state. Every caller is
resolved, and only a broken state costs a restart."""

from __future__ import annotations

import dataclasses
import os
import stat
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from live_memory.actors import ActorSystem, Answer, Ask, Clear, GatewayActor, GetStats, Route
from live_memory.actors.message import FileEvent, Notify, NotifyOutcome, UpdateServices
from live_memory.actors.runtime import resolve
from live_memory.actors.workspace import WorkspaceActor
from live_memory.agent import build_services
from live_memory.agent.services import Services, Stores
from live_memory.agent.spend import SpendGuard
from live_memory.config import load_settings
from live_memory.knowledge import TranscriptQueue, UsageLedger
from live_memory.memory.snapshot_store import SnapshotStore
from live_memory.providers.types import Usage
from live_memory.workspace import WorkspaceState
from tests.support.fakes import FakeProvider, Text
from tests.support.repo import make_repo

WAIT_S = 20.0


class Harness:
    def __init__(
        self,
        tmp_path: Path,
        fake: FakeProvider,
        workspace_cls: type[WorkspaceActor],
        sync: Callable[[int], None] = os.fsync,
    ):
        self.root = make_repo(tmp_path / "repo", {"src/app.py": "def answer():\n    return 42\n"})
        data = tmp_path / "data"
        env = {
            "LIVE_MEMORY_DATA_DIR": str(data),
            "ANTHROPIC_API_KEY": "dummy-key",
            "ANTHROPIC_BASE_URL": fake.anthropic_base_url,
        }
        settings = load_settings(env, home=tmp_path)
        self.stores = Stores(UsageLedger(data / "usage.sqlite3"), TranscriptQueue(data / "q.db"))
        self.services = build_services(settings, self.stores)
        self.store = SnapshotStore(settings.snapshot_dir, sync=sync)
        self.system = ActorSystem()
        self.gateway = self.system.start(
            GatewayActor, services=self.services, store=self.store, workspace_cls=workspace_cls
        )

    def tell(self, message: Any) -> None:
        self.gateway.tell(Route(str(self.root), message))

    def request(self, make: Any) -> Future[Any]:
        reply: Future[Any] = Future()
        self.tell(make(reply))
        return reply

    def warm(self) -> None:
        """Create the workspace and hold a file, so no cold-memory model calls are added."""
        self.request(Clear).result(WAIT_S)
        event = FileEvent("src/app.py", "read", "def answer():\n    return 42\n")
        outcome = self.request(lambda r: Notify((event,), r)).result(WAIT_S)
        assert outcome == NotifyOutcome(1, 0)

    def ask(self, question: str) -> Future[Answer]:
        return self.request(lambda r: Ask(question, 500, time.monotonic() + 30, r))

    def stats(self) -> dict[str, Any]:
        result: dict[str, Any] = self.request(GetStats).result(WAIT_S)
        return result

    def workspaces(self) -> list[dict[str, object]]:
        return [a for a in self.system.inventory() if a["kind"] == "workspace"]

    def close(self) -> None:
        if self.services.provider is not None:
            self.system.io.submit(self.services.provider.aclose()).result(WAIT_S)
        self.system.shutdown()
        self.stores.close()


@pytest.fixture
def fake() -> Iterator[FakeProvider]:
    with FakeProvider() as provider:
        yield provider


def _harness(tmp_path: Path, fake: FakeProvider, cls: type[WorkspaceActor]) -> Iterator[Harness]:
    harness = Harness(tmp_path, fake, cls)
    try:
        yield harness
    finally:
        harness.close()


@pytest.fixture
def plain(tmp_path: Path, fake: FakeProvider) -> Iterator[Harness]:
    yield from _harness(tmp_path, fake, WorkspaceActor)


def test_a_reply_slot_its_asker_cancelled_is_skipped_not_raised() -> None:
    slot: Future[str] = Future()
    slot.cancel()
    assert resolve(slot, "too late") is False
    assert resolve(slot, error=RuntimeError("also too late")) is False
    filled: Future[str] = Future()
    assert resolve(filled, "on time") is True and filled.result() == "on time"
    assert resolve(filled, "twice") is False and filled.result() == "on time"


class FailingStats(WorkspaceActor):
    """A real workspace whose stats raise (a stand-in for a bug in a read-only handler)."""

    armed = False

    def stats(self) -> dict[str, object]:
        if FailingStats.armed:
            raise RuntimeError("boom in stats")
        return super().stats()


@pytest.fixture
def failing_stats(tmp_path: Path, fake: FakeProvider) -> Iterator[Harness]:
    yield from _harness(tmp_path, fake, FailingStats)


def test_a_late_reply_to_an_asker_that_went_away_leaves_the_workspace_serving(
    plain: Harness, fake: FakeProvider
) -> None:
    """Fault 1: the edge cancels a slot on timeout; the answer that came later raised
    InvalidStateError in the actor, which restarted the workspace and failed every asker."""
    plain.warm()
    fake.responder = lambda recorded: (
        Text("kept answer", delay_s=1.5)
        if "still there" in recorded.raw.decode()
        else Text("late answer", delay_s=1.0)
    )
    late, kept = plain.ask("will you be late?"), plain.ask("still there?")
    fake.wait_for_requests(2, timeout_s=WAIT_S)
    late.cancel()  # what wait_reply does on timeout or disconnect
    assert kept.result(WAIT_S).answer == "kept answer"
    (workspace,) = plain.workspaces()
    assert workspace["failures"] == 0
    assert plain.stats()["questions_answered"] >= 1


def test_a_failing_handler_answers_its_caller_and_does_not_restart_the_workspace(
    failing_stats: Harness, fake: FakeProvider
) -> None:
    harness = failing_stats
    harness.warm()
    fake.script(Text("answered across the failure", delay_s=1.0))
    question = harness.ask("slow?")
    fake.wait_for_requests(1, timeout_s=WAIT_S)
    (before,) = harness.workspaces()
    FailingStats.armed = True
    with pytest.raises(RuntimeError, match="boom in stats"):
        harness.request(GetStats).result(WAIT_S)
    FailingStats.armed = False
    assert question.result(WAIT_S).answer == "answered across the failure"
    (after,) = harness.workspaces()
    assert after["started_at"] == before["started_at"]  # the same incarnation
    assert after["failures"] == 1 and "boom in stats" in str(after["last_error"])


class FailingSpend(SpendGuard):
    def record(self, workspace: str, usage: Usage, cost: float | None, *, question: bool) -> None:
        raise OSError("usage ledger is locked")


def test_a_failing_spend_record_after_a_commit_still_answers_and_persists(
    plain: Harness, fake: FakeProvider
) -> None:
    """Fault 2: the slot was popped, then spend.record raised before the snapshot and the
    answer: the answer was lost and its caller waited forever."""
    broken: Services = dataclasses.replace(
        plain.services, spend=FailingSpend(plain.stores.usage, plain.services.settings)
    )
    plain.gateway.tell(UpdateServices(broken))
    plain.warm()
    fake.script(Text("the answer survives"))
    assert plain.ask("q?").result(WAIT_S).answer == "the answer survives"
    saved = plain.store.load(plain.root)
    assert saved is not None
    assert "the answer survives" in [t["text"] for t in saved["history"]]  # type: ignore[union-attr]
    plain.stats()  # the spend is recorded after the answer: wait until the actor got there
    (workspace,) = plain.workspaces()
    assert "usage ledger is locked" in str(workspace["last_error"])


class BreaksOnce(WorkspaceState):
    broke = False

    def notify(self, events: tuple[FileEvent, ...], now: float) -> NotifyOutcome:
        if not BreaksOnce.broke and any(e.path == "break.py" for e in events):
            BreaksOnce.broke = True
            self.version = -1  # half-changed, then raised: this state cannot be trusted
            raise RuntimeError("state corrupted")
        return super().notify(events, now)


class BreakableWorkspace(WorkspaceActor):
    def new_state(self) -> WorkspaceState:
        return BreaksOnce(self.root, self.ingestor, self.limits(), time.monotonic())


@pytest.fixture
def breakable(tmp_path: Path, fake: FakeProvider) -> Iterator[Harness]:
    yield from _harness(tmp_path, fake, BreakableWorkspace)


def test_a_broken_state_restarts_and_its_forks_in_flight_commit_to_the_new_incarnation(
    breakable: Harness, fake: FakeProvider
) -> None:
    harness = breakable
    harness.warm()
    fake.script(Text("first"))
    assert harness.ask("first?").result(WAIT_S).answer == "first"
    snapshotted = harness.stats()["version"]
    fake.script(Text("answered by the new incarnation", delay_s=1.5))
    question = harness.ask("slow?")
    fake.wait_for_requests(2, timeout_s=WAIT_S)
    (old,) = harness.workspaces()
    with pytest.raises(RuntimeError, match="state corrupted"):
        harness.request(lambda r: Notify((FileEvent("break.py", "read", "x"),), r)).result(WAIT_S)
    assert question.result(WAIT_S).answer == "answered by the new incarnation"
    (new,) = harness.workspaces()
    assert new["started_at"] != old["started_at"]
    assert new["failures"] == 1
    stats = harness.stats()
    assert stats["messages_retained"] == 4  # restored from the snapshot, then the commit
    assert stats["version"] == snapshotted + 1  # a linear commit on the restored state
    assert stats["commits"]["linear"] == 2


def test_answers_wait_for_no_fsync_and_their_snapshot_settles_after(
    tmp_path: Path, fake: FakeProvider
) -> None:
    held = threading.Event()
    release = threading.Event()
    hold = threading.Event()

    def sync(fd: int) -> None:
        if hold.is_set() and not stat.S_ISDIR(os.fstat(fd).st_mode):
            held.set()
            assert release.wait(WAIT_S)
        os.fsync(fd)

    harness = Harness(tmp_path, fake, WorkspaceActor, sync=sync)
    try:
        harness.warm()
        assert harness.store.wait_settled(WAIT_S)
        hold.set()
        fake.script(Text("answered before the fsync"), Text("the next one too"))
        assert harness.ask("durable?").result(WAIT_S).answer == "answered before the fsync"
        assert held.wait(WAIT_S)  # its settle is under way, held
        unsettled = harness.store.unsettled_path_for(harness.root)
        assert "answered before the fsync" in unsettled.read_text()  # a crash keeps it
        # The workspace's next question does not wait behind that fsync either.
        assert harness.ask("and again?").result(WAIT_S).answer == "the next one too"
        assert "the next one too" in unsettled.read_text()
        # The answer goes out inside the commit's effects and the settle is queued after
        # them; a round trip through the mailbox is over only once that is done. Without it,
        # on a loaded machine the wait below saw only the first settle (which leaves the newer
        # copy to its own) and the copy was still unsettled.
        harness.stats()
        release.set()
        assert harness.store.wait_settled(WAIT_S)
        assert not unsettled.exists()
        settled = harness.store.path_for(harness.root).read_text()
        assert "answered before the fsync" in settled and "the next one too" in settled
    finally:
        release.set()
        harness.close()
