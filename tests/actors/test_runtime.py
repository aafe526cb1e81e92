"""The actor runtime: each actor is a pykka ThreadingActor on its own daemon thread, named for
what it serves, handling its messages one at a time and in order; a stopped one's thread ends."""

from __future__ import annotations

import ast
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pykka
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
class _Hold:
    entered: threading.Event
    release: threading.Event


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
            case _Hold():
                message.entered.set()
                message.release.wait(WAIT_S)
            case _Boom():
                raise RuntimeError("boom")
            case _:
                super().handle(message)


@pytest.fixture
def system() -> Iterator[ActorSystem]:
    system = ActorSystem()
    yield system
    system.shutdown()


def _report(ref: Any) -> tuple[list[int], str, int]:
    reply: Future[tuple[list[int], str, int]] = Future()
    ref.tell(_Report(reply))
    return reply.result(WAIT_S)


def test_fifty_actors_each_handle_their_messages_serially_and_in_order(
    system: ActorSystem,
) -> None:
    refs = [system.start(_Recorder, f"r{i}") for i in range(50)]
    senders = [
        threading.Thread(target=lambda ref=ref: [ref.tell(_Step(n)) for n in range(200)])
        for ref in refs
    ]
    for sender in senders:
        sender.start()
    for sender in senders:
        sender.join(WAIT_S)
    for i, ref in enumerate(refs):
        seen, thread, _ = _report(ref)
        assert seen == list(range(200))
        assert thread == f"recorder-r{i}"
    depths = [row["mailbox_depth"] for row in system.inventory()]
    assert depths == [0] * 50


def test_the_mailbox_depth_counts_the_messages_waiting(system: ActorSystem) -> None:
    ref = system.start(_Recorder, "held")
    entered, release = threading.Event(), threading.Event()
    ref.tell(_Hold(entered, release))
    assert entered.wait(WAIT_S)
    for n in range(3):
        ref.tell(_Step(n))
    row = next(r for r in system.inventory() if r["name"] == "held")
    assert row["mailbox_depth"] == 3
    assert row["current_message"] == "_Hold"
    release.set()
    assert _report(ref)[0] == [0, 1, 2]


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


def test_a_stopped_actors_thread_ends(system: ActorSystem) -> None:
    ref = system.start(_Recorder, "ending")
    ref.tell(_Step(1))
    _, name, _ = _report(ref)
    thread = next(t for t in threading.enumerate() if t.name == name)
    assert thread.daemon
    ref.stop(block=True, timeout=WAIT_S)
    thread.join(WAIT_S)
    assert not thread.is_alive()


def test_pykka_is_used_through_its_public_api_only() -> None:
    """No private pykka module or name, nor an override or use of an actor's private members
    (`_actor_loop`, `_actor_ref`, `_create_actor_inbox`...): what pykka documents is what the
    runtime may rely on across its releases."""
    members = {*dir(pykka.ThreadingActor), *vars(pykka.ThreadingActor()), *dir(pykka.ActorRef)}
    hidden = {n for n in members if n.startswith("_") and not n.startswith("__")}
    hidden -= {"_stop", "_abc_impl", "_is_protocol"}  # too common to tell from names of ours
    package = Path(__file__).resolve().parents[2] / "live_memory"
    private = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("pykka"):
                names = [node.module or "", *(a.name for a in node.names)]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names if a.name.startswith("pykka")]
            elif isinstance(node, ast.Attribute):
                pykkas = "pykka" in ast.unparse(node.value)
                names = [node.attr] if pykkas or node.attr in hidden else []
            elif isinstance(node, ast.FunctionDef) and node.name in hidden:
                names = [node.name]
            parts = [p for name in names for p in name.split(".")]
            if any(p.startswith("_") and not p.startswith("__") for p in parts):
                private.append(f"{path.relative_to(package.parent)}:{node.lineno} {names}")
    assert not private, private
