"""The actor runtime: pooled actors share a bounded set of worker threads, each handling its
own messages one at a time and in order; dedicated actors keep their own thread."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

import pytest

from live_memory.actors.runtime import Actor, ActorDeadError, ActorSystem

WAIT_S = 10.0


@dataclass(frozen=True)
class _Step:
    value: int


@dataclass(frozen=True)
class _Report:
    reply: Future[tuple[list[int], str, int]]


@dataclass(frozen=True)
class _Boom:
    reply: Future[None]


class _Recorder(Actor):
    """Records what it handled, on which thread, and how many handlers overlapped."""

    kind = "recorder"

    def __init__(self, system: ActorSystem, name: str) -> None:
        super().__init__(system, name)
        self.seen: list[int] = []
        self.thread = ""
        self.busy = False

    def handle(self, message: Any) -> None:
        match message:
            case _Step():
                assert not self.busy, "two messages of one actor ran at once"
                self.busy = True
                self.thread = threading.current_thread().name
                self.seen.append(message.value)
                self.busy = False
            case _Report():
                message.reply.set_result((list(self.seen), self.thread, self.info.processed))
            case _Boom():
                raise RuntimeError("boom")
            case _:
                super().handle(message)


class _Pinned(_Recorder):
    kind = "pinned"
    dedicated_thread = True


@pytest.fixture
def system() -> Iterator[ActorSystem]:
    system = ActorSystem(pool_workers=3)
    yield system
    system.shutdown()


def _report(ref: Any) -> tuple[list[int], str, int]:
    reply: Future[tuple[list[int], str, int]] = Future()
    ref.tell(_Report(reply))
    return reply.result(WAIT_S)


def test_fifty_actors_run_on_the_bounded_pool_serially_and_in_order(system: ActorSystem) -> None:
    before = {t.name for t in threading.enumerate()}
    refs = [system.start(_Recorder, f"r{i}") for i in range(50)]
    senders = [
        threading.Thread(target=lambda ref=ref: [ref.tell(_Step(n)) for n in range(200)])
        for ref in refs
    ]
    for sender in senders:
        sender.start()
    for sender in senders:
        sender.join(WAIT_S)
    for ref in refs:
        seen, thread, _ = _report(ref)
        assert seen == list(range(200))
        assert thread.startswith("actor-pool-")
    new_threads = {t.name for t in threading.enumerate()} - before
    assert len(new_threads) <= 3, new_threads
    assert system.pool.threads() <= 3
    depths = [row["mailbox_depth"] for row in system.inventory()]
    assert depths == [0] * 50


def test_a_failing_handler_answers_its_caller_and_is_inventoried(system: ActorSystem) -> None:
    ref = system.start(_Recorder, "failing")
    reply: Future[None] = Future()
    ref.tell(_Boom(reply))
    with pytest.raises(RuntimeError, match="boom"):
        reply.result(WAIT_S)
    _, _, processed = _report(ref)
    assert processed == 1
    row = next(r for r in system.inventory() if r["name"] == "failing")
    assert row["failures"] == 1
    assert row["last_error"] == "RuntimeError: boom"


def test_a_stopped_pooled_actor_refuses_messages_and_leaves_the_inventory(
    system: ActorSystem,
) -> None:
    ref = system.start(_Recorder, "stopping")
    ref.tell(_Step(1))
    ref.stop(block=True, timeout=WAIT_S)
    assert not ref.is_alive()
    with pytest.raises(ActorDeadError):
        ref.tell(_Step(2))
    assert all(r["name"] != "stopping" for r in system.inventory())


def test_a_dedicated_actor_has_its_own_thread(system: ActorSystem) -> None:
    ref = system.start(_Pinned, "pinned")
    ref.tell(_Step(1))
    seen, thread, _ = _report(ref)
    assert seen == [1]
    assert thread == "pinned-pinned"
