"""Model-based test of WorkspaceState: random interleavings of questions, fork completions in
any order, racing commits, notifications, compactions, wipes, passivation, restarts, refused
snapshot writes and failures; the invariants are checked after every step.

2,000 examples of up to 12 steps each (a few seconds: no threads, no server).
"""

from __future__ import annotations

import hashlib
import itertools
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from live_memory.errors import AnswerNotPersisted, ShuttingDown
from live_memory.memory.commit import decide_commit
from live_memory.memory.compaction import split_history_for_summary
from live_memory.memory.ingest import Ingestor
from live_memory.memory.model import QA_KINDS, LedgerFact
from live_memory.memory.persist import window_from_state
from live_memory.workspace import (
    CancelFork,
    Drained,
    Effect,
    Fail,
    FileEvent,
    Forward,
    Persist,
    Question,
    Reply,
    StartFork,
    WorkspaceCounters,
    WorkspaceState,
)
from tests.workspace.support import LIMITS, finish

ROOT = Path(tempfile.mkdtemp(prefix="lm-state-machine-"))
PATHS = ("a.py", "b.py", "src/c.py")
KINDS = ("read", "write", "change", "add", "unlink", "modified")
CONTENT_KINDS = ("read", "write")
HELD_CAP = 14


@dataclass
class Fork:
    start: StartFork
    base_qa: list[str]
    notified: dict[str, FileEvent] = field(default_factory=dict)
    """The last knowledge-bearing notification per path since this fork's base."""


class WorkspaceMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.now = 0.0
        self.state = self._fresh()
        self.slots = itertools.count(1)
        self.asked: set[int] = set()
        self.resolved: dict[int, str] = {}
        self.forks: dict[int, Fork] = {}
        self.snapshot: dict[str, object] | None = None
        self.folded: set[str] = set()
        """Answers a compaction folded into the ledger (their history may go)."""

    def _fresh(self) -> WorkspaceState:
        # A held-bytes cap below three files' content, so LRU shedding at ingest is exercised.
        state = WorkspaceState(str(ROOT), Ingestor(ROOT, max_held_bytes=HELD_CAP), LIMITS, self.now)
        state.window.freeze()
        return state

    # --- carrying out effects like the shell -----------------------------------------
    def run(self, effects: list[Effect], refuse: bool = False) -> None:
        queue = list(effects)
        while queue:
            effect = queue.pop(0)
            match effect:
                case Persist():
                    if not refuse:
                        self.snapshot = effect.snapshot
                    queue += self.state.persisted(effect.ticket, "ENOSPC" if refuse else None)
                case Reply():
                    self._resolve(effect.slot, "answered")
                    answer = effect.value.answer
                    adopted = answer in self._qa(self.state.window.history)
                    if adopted:  # acknowledged only once written: the snapshot holds it
                        assert self.snapshot is not None
                        assert answer in [t["text"] for t in self.snapshot["history"]]
                case Fail():
                    self._resolve(effect.slot, type(effect.error).__name__)
                case StartFork():
                    base = self._qa(effect.window.history)
                    self.forks[effect.fork_id] = Fork(effect, base)
                case CancelFork():
                    pass  # the fork fails on its own later (rule fail_fork)
                case Forward():
                    raise AssertionError("forwarded outside passivation")
                case Drained():
                    self._resolve(effect.slot, "drained")

    def _resolve(self, slot: int, how: str) -> None:
        assert slot not in self.resolved, f"slot {slot} resolved twice ({self.resolved[slot]})"
        self.resolved[slot] = how

    @staticmethod
    def _qa(history: object) -> list[str]:
        return [t.text for t in history if t.kind in QA_KINDS]  # type: ignore[attr-defined]

    # --- rules -------------------------------------------------------------------------
    @rule(text=st.sampled_from(["where is x?", "why y?", "how z?"]))
    def ask(self, text: str) -> None:
        slot = next(self.slots)
        self.asked.add(slot)
        self.run(self.state.ask(Question(slot, f"{text} #{slot}", 500, self.now + 60), self.now))

    @precondition(lambda self: self.forks)
    @rule(
        data=st.data(),
        reads=st.lists(st.sampled_from(PATHS), max_size=2),
        compact=st.booleans(),
        refuse=st.booleans(),
    )
    def finish_fork(
        self, data: st.DataObject, reads: list[str], compact: bool, refuse: bool
    ) -> None:
        fork_id = data.draw(st.sampled_from(sorted(self.forks)))
        fork = self.forks.pop(fork_id)
        window = fork.start.window
        if compact:  # fold the oldest Q/A into a ledger fact, as a compaction would
            old, _ = split_history_for_summary(window, keep_pairs=1)
            if old:
                texts = self._qa(old)
                window.learn([LedgerFact("summary: " + " | ".join(texts), ())])
                window.history = [t for t in window.history if t not in old]
                self.folded.update(texts)
        window, outcome = finish(fork.start, f"answer to {fork.start.question}", reads=tuple(reads))
        live = self.state.window
        flight = self.state.in_flight.get(fork_id)
        before = self.state.version
        rule_says = (
            decide_commit(
                flight.base_version,
                before,
                self.state.wiped_at_version,
                outcome.exploration,
                self.state.current_score,
            )
            if flight
            else None
        )
        self.run(self.state.fork_done(fork_id, window, outcome, self.now), refuse=refuse)
        if flight is None:
            return
        adopted = self.state.window is window
        if rule_says == "linear":
            assert adopted, "a linear commit is always adopted"
        assert adopted == (rule_says != "race_dropped"), "a raced commit follows the rule"
        if not adopted:
            assert self.state.window is live
            return
        history = self._qa(window.history)
        for text in fork.base_qa:  # nothing the fork started from is lost unless folded
            assert text in history or text in self.folded
        waiting = self.state.rereads.waiting()  # changes to held files the shell re-reads
        for path, event in fork.notified.items():  # no notification lost across the commit
            self._holds(window, path, event, path in waiting)

    @staticmethod
    def _holds(window: object, path: str, event: FileEvent, reread: bool) -> None:
        ctx = window.files.get(path)  # type: ignore[attr-defined]
        if event.kind in CONTENT_KINDS and event.content is not None:
            # Current at the notified bytes (held, or shed at the cap but never outdated).
            digest = hashlib.sha256(event.content.encode()).hexdigest()
            assert ctx is not None and ctx.state == "current" and ctx.sha256 == digest
        elif event.kind == "unlink":
            assert ctx is None or ctx.state == "deleted"
        elif not reread:
            assert ctx is None or ctx.state != "current" or ctx.content is None

    @precondition(lambda self: self.forks)
    @rule(data=st.data())
    def fail_fork(self, data: st.DataObject) -> None:
        fork_id = data.draw(st.sampled_from(sorted(self.forks)))
        del self.forks[fork_id]
        self.run(self.state.fork_failed(fork_id, RuntimeError("provider down")))

    @precondition(lambda self: any(s not in self.resolved for s in self.asked))
    @rule(data=st.data())
    def asker_goes_away(self, data: st.DataObject) -> None:
        slot = data.draw(st.sampled_from(sorted(s for s in self.asked if s not in self.resolved)))
        self.run(self.state.cancelled(slot))

    @rule(
        path=st.sampled_from(PATHS),
        kind=st.sampled_from(KINDS),
        content=st.sampled_from([None, "", "x = 1\n", "y = 2\n", "z = 3\n"]),
    )
    def notify(self, path: str, kind: str, content: str | None) -> None:
        event = FileEvent(path, kind, content)  # type: ignore[arg-type]
        self.state.notify((event,), self.now)
        if kind == "read" and content is None:
            return  # no bytes, no news: ignored
        for fork in self.forks.values():
            fork.notified[path] = event

    @rule(text=st.sampled_from(["fact one", "fact two"]))
    def learn(self, text: str) -> None:
        _, effects = self.state.learn([LedgerFact(text, ())], self.now)
        self.run([e for e in effects if isinstance(e, Persist)])

    @rule(seconds=st.sampled_from([1.0, 10.0, 1000.0]))
    def tick(self, seconds: float) -> None:
        self.now += seconds
        self.run([e for e in self.state.tick(self.now, 900.0) if isinstance(e, Persist)])

    @rule()
    def wipe(self) -> None:
        self.state.wipe(self.now)
        self.snapshot = None
        self.folded.clear()

    @precondition(lambda self: not self.state.in_flight and not self.state.closing)
    @rule()
    def passivate_and_reactivate(self) -> None:
        effects = self.state.passivate(flush=True)
        assert not any(isinstance(e, Forward) for e in effects)  # idle: nothing waiting
        self.run(effects)
        self._reincarnate()

    @precondition(lambda self: not self.state.closing)
    @rule()
    def restart_broken_state(self) -> None:
        """The supervisor replaces the incarnation from its snapshot; forks in flight commit
        to the new one and waiting questions move over."""
        old = self.state
        forwarded = [e.question for e in old.passivate(flush=False) if isinstance(e, Forward)]
        self._reincarnate()
        for fork_id, flight in old.in_flight.items():
            self.state.adopt(fork_id, flight.slot, flight.base_version)
        for fork in self.forks.values():
            fork.notified.clear()  # the new incarnation replays only what it hears itself
        for question in forwarded:
            self.run(self.state.ask(question, self.now))

    def _reincarnate(self) -> None:
        fresh = self._fresh()
        if self.snapshot is not None:
            window = window_from_state(str(ROOT), self.snapshot, lambda p: None)
            counters = self.snapshot["counters"]
            assert isinstance(counters, dict)
            fresh.restore(window, WorkspaceCounters.from_state(counters), self.snapshot["version"])  # type: ignore[arg-type]
            fresh.window.freeze()
        self.state = fresh

    @precondition(lambda self: not self.state.closing)
    @rule()
    def drain(self) -> None:
        slot = next(self.slots)
        self.asked.add(slot)
        self.run(self.state.drain(slot))

    # --- invariants --------------------------------------------------------------------
    @invariant()
    def every_admitted_question_is_open_or_resolved_once(self) -> None:
        state = self.state
        open_slots = [q.slot for q in state.pending] + [f.slot for f in state.in_flight.values()]
        open_slots += state.drains
        assert len(open_slots) == len(set(open_slots))
        assert not set(open_slots) & set(self.resolved)
        assert set(open_slots) | set(self.resolved) == self.asked
        assert not state.awaiting  # every write was reported back
        for how in self.resolved.values():
            assert how in {
                "answered",
                "drained",
                "RuntimeError",
                "ClientGone",
                "Busy",
                AnswerNotPersisted.__name__,
                ShuttingDown.__name__,
            }, how

    @invariant()
    def the_budget_is_the_prompt_that_would_be_sent_and_held_bytes_stay_capped(self) -> None:
        window = self.state.window
        sent = window.copy()
        sent.sync_deltas()  # what the next question's prompt carries, pending delta included
        chars = len(sent.tree) + len(sent.frozen or "") + sum(len(t.text) for t in sent.history)
        assert window.budget_chars() == chars
        assert window.held_bytes <= HELD_CAP

    @invariant()
    def the_notify_log_holds_nothing_older_than_the_oldest_fork_base(self) -> None:
        log = self.state.notify_log
        bases = [f.base_seq for f in self.state.in_flight.values()]
        oldest = log.oldest_seq()
        if not bases:
            assert oldest is None
        elif oldest is not None:
            assert oldest > min(bases)
        assert log.held_bytes <= LIMITS.notify_log_max_bytes


WorkspaceMachine.TestCase.settings = settings(
    max_examples=int(os.environ.get("LM_STATE_EXAMPLES", "2000")),
    stateful_step_count=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestWorkspaceStateMachine = WorkspaceMachine.TestCase
# ~15 s of CPU; on a loaded 2-core machine the wall time can be several times that.
pytestmark = pytest.mark.timeout(600)
