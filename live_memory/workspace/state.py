"""WorkspaceState: one workspace's memory and question flow as a plain object.

Every method takes an event and returns the effects for the shell to carry out, in order.
The commit path is two-phase so that nothing is acknowledged before it is durable:
`fork_done` adopts (or drops) a fork's window and returns `Persist`; the shell writes it and
reports back with `persisted(ticket, error)`, which answers the asker (or tells it the answer
is not persisted) and only then accounts for the spend.

The class is built in layers, one concept per module: its fields and persist tickets
(durability.py, over the freshness events of freshness.py), its lifecycle (lifecycle.py),
and here the questions, commits and notifications.
"""

from __future__ import annotations

import itertools

from live_memory.agent import QuestionOutcome
from live_memory.errors import AnswerNotPersisted, Busy, ClientGone, ShuttingDown
from live_memory.memory import LedgerFact, Window, decide_commit
from live_memory.providers import CacheTtl, Usage
from live_memory.workspace.durability import AwaitedWrite, HeldAnswer, InFlight, Limits
from live_memory.workspace.effects import (
    Account,
    CancelFork,
    Drained,
    Effect,
    Fail,
    Reply,
    StartFork,
    WantDistil,
    WriteInsights,
)
from live_memory.workspace.lifecycle import Lifecycle
from live_memory.workspace.records import Answer, FileEvent, NotifyOutcome, Question

__all__ = ["InFlight", "Limits", "WorkspaceState", "answer_of"]


def answer_of(outcome: QuestionOutcome) -> Answer:
    loop = outcome.loop
    return Answer(
        text=f"{outcome.answer_text}\n{outcome.trailer}",
        answer=outcome.answer_text,
        model=loop.model,
        latency_s=outcome.latency_s,
        usage=loop.usage,
        tool_calls=loop.tool_calls,
        files_read=loop.files_read,
        cost_usd=outcome.cost_usd,
        context_pct=outcome.context_pct,
        timed_out=loop.timed_out,
        stop_reason=loop.stop_reason,
        provider_s=loop.provider_s,
        sources=outcome.sources,
    )


class WorkspaceState(Lifecycle):
    """No threads, no actor runtime, no I/O of its own (the injected Ingestor hashes a
    known file on a bare "change" event, the only disk read, as a pure function of disk)."""

    __slots__ = ()

    # --- questions -------------------------------------------------------------------
    def ask(self, question: Question, now: float) -> list[Effect]:
        if self.closing:
            return [Fail(question.slot, ShuttingDown("the server is shutting down"))]
        if len(self.pending) >= self.limits.max_pending:
            waiting = len(self.pending)
            return [
                Fail(
                    question.slot,
                    Busy(
                        f"workspace {self.root} has {waiting} questions waiting "
                        "(LIVE_MEMORY_MAX_PENDING_QUESTIONS); retry later"
                    ),
                )
            ]
        self.last_activity = now
        self.pending.append(question)
        return self._admit()

    def cancelled(self, slot: int) -> list[Effect]:
        """The asker of `slot` went away."""
        for question in self.pending:
            if question.slot == slot:
                self.pending.remove(question)
                return [Fail(slot, ClientGone("the asker went away"))]
        for fork_id, flight in self.in_flight.items():
            if flight.slot == slot:
                return [CancelFork(fork_id, "asker went away")]
        return []

    def adopt(self, fork_id: int, slot: int, base_version: int) -> None:
        """A fork of the previous incarnation (restarted under it) commits here: everything
        logged from now on is replayed onto its window."""
        self.in_flight[fork_id] = InFlight(slot, base_version, self.notify_log.seq)
        self.fork_ids = itertools.count(max(fork_id + 1, next(self.fork_ids)))

    def _admit(self) -> list[Effect]:
        effects: list[Effect] = []
        while not self.closing and self.pending and len(self.in_flight) < self.limits.concurrency:
            effects.append(self._spawn(self.pending.pop(0)))
        return effects

    def _spawn(self, question: Question) -> StartFork:
        window = self.window
        # Deltas past their share of the window: one fresh frozen block (one cache write)
        # instead of a growing tail of superseded file copies.
        if window.refresh(self.limits.max_context_tokens, self.limits.refreeze_delta_share):
            self.refreezes += 1
            window.sync_deltas()  # what a freeze does not render (notes) still reaches it
        hints = self._hints(window.drain_recently_modified())
        fork_id = next(self.fork_ids)
        self.in_flight[fork_id] = InFlight(
            question.slot, self.version, self.notify_log.seq, question.question
        )
        return StartFork(
            fork_id,
            question.slot,
            question.question,
            window.copy(),
            hints,
            question.soft_deadline,
            question.max_answer_tokens,
            self.version,
            self.notify_log.seq,
        )

    def fork_done(
        self,
        fork_id: int,
        window: Window,
        outcome: QuestionOutcome,
        now: float,
        cache_ttl: CacheTtl | None = None,
    ) -> list[Effect]:
        """A fork finished: adopt its window under the commit rule, then persist."""
        flight = self.in_flight.pop(fork_id, None)
        account = Account(
            outcome.loop.usage + outcome.summary_usage,
            outcome.cost_usd,
            question=True,
            usage_by_call=tuple(outcome.loop.usage_by_call),
            cache_ttl=cache_ttl,
        )
        if flight is None:  # not a fork of ours: its spend still counts
            return [account]
        decision = decide_commit(
            flight.base_version,
            self.version,
            self.wiped_at_version,
            outcome.exploration,
            self.current_score,
        )
        if decision != "race_dropped":
            self._replay(window, flight.base_seq)
            window.recently_modified = list(
                dict.fromkeys([*window.recently_modified, *self.window.recently_modified])
            )
            window.bound_manifest(self.limits.manifest_max_chars)  # the fork's reads too
            self.window = window
            self.version += 1
            self.current_score = outcome.exploration
            reads = [r.path for r in outcome.loop.reads]
            self._answered(window, flight.question, outcome.answer_text, reads)
        self.counters.record(outcome, decision)
        self.last_activity = self.last_question_at = self.last_touch = now
        self._trim_log()
        self._changed(now)
        ack = HeldAnswer(flight.slot, answer_of(outcome), account, outcome.compacted)
        return [self._persist(AwaitedWrite(acks=[ack]))]

    def _replay(self, window: Window, base_seq: int) -> None:
        for entry in self.notify_log.since(base_seq):
            if self._replay_fresh(window, entry):
                continue
            if isinstance(entry, FileEvent):
                self.ingestor.apply(window, entry.path, entry.kind, entry.content)
            elif isinstance(entry, tuple):
                window.learn(entry, self.limits.max_ledger_facts)

    def fork_failed(self, fork_id: int, error: BaseException) -> list[Effect]:
        flight = self.in_flight.pop(fork_id, None)
        if flight is None:
            return []
        self.counters.failures += 1
        self._trim_log()
        return [Fail(flight.slot, error), *self._after_work()]

    def persisted(self, ticket: int, error: str | None) -> list[Effect]:
        """The snapshot of `ticket` was written (error None) or refused (error says why)."""
        pending = self.awaiting.pop(ticket, AwaitedWrite())
        if error is None:
            self.degraded = None
            self.saved = max(self.saved, pending.generation)
            if not self.dirty:
                self.dirty_since = None
        else:
            self.degraded = error
        effects: list[Effect] = []
        for ack in pending.acks:
            if error is None:
                effects.append(Reply(ack.slot, ack.answer))
            else:
                effects.append(Fail(ack.slot, AnswerNotPersisted(error, ack.answer.text)))
            effects.append(ack.account)
            if ack.compacted:
                effects.append(WriteInsights())
        effects += [Drained(slot) for slot in pending.drains]
        if pending.acks:
            effects += self._after_work()
        return effects

    def _after_work(self) -> list[Effect]:
        """Admit waiting questions; when idle, offer distillation; finish a drain."""
        effects = self._admit()
        if self.drains and not self.in_flight:
            effects += self._finish_drain()
        elif not (self.pending or self.in_flight or self.closing or self.distilling is not None):
            effects.append(WantDistil())
        return effects

    def _trim_log(self) -> None:
        bases = [
            f.base_seq for f in self.in_flight.values() if f.base_version >= self.wiped_at_version
        ]
        self.notify_log.trim(min(bases) if bases else None)

    # --- notifications and knowledge -------------------------------------------------
    def notify(self, events: tuple[FileEvent, ...], now: float) -> NotifyOutcome:
        """Apply file events; they do not count as activity (a workspace that only hears
        notifications is idle), but the manifest they change is snapshotted, debounced."""
        accepted = 0
        for event in events:
            rel, before, claimed = self._claim(event)
            if claimed:  # a held file changed: re-read by the shell (`rereads_due`)
                accepted += 1
                continue
            if self.ingestor.apply(self.window, event.path, event.kind, event.content):
                accepted += 1
            if self.in_flight:
                self.notify_log.append(event)
            self._after_event(rel, before, event.kind)
        # After the batch, not per event: one comparison when under the cap.
        self.window.bound_manifest(self.limits.manifest_max_chars)
        if accepted:
            self._changed(now)
        return NotifyOutcome(accepted, len(events) - accepted)

    def learn(self, facts: list[LedgerFact], now: float) -> tuple[int, list[Effect]]:
        """Merge facts (transcripts, imports); logged so a concurrent commit keeps them."""
        added = self.window.learn(facts, self.limits.max_ledger_facts)
        if self.in_flight and facts:
            self.notify_log.append(tuple(facts))
        self._changed(now)
        return added, [self._persist(), WriteInsights()]

    def ping_done(self, usage: Usage | None, cost: float | None, now: float) -> None:
        """A keep-warm ping came back (usage None: it failed)."""
        self.pinging = False
        if usage is not None:
            self.counters.record_ping(usage, cost)
            self._changed(now)

    def distil_started(self, row_id: int) -> None:
        self.distilling = row_id

    def distil_finished(self) -> list[Effect]:
        self.distilling = None
        return [] if self.pending or self.in_flight or self.closing else [WantDistil()]

    def set_tree(self, tree: str) -> None:
        self.window.tree = tree
        self.tree_built, self.tree_stale = True, False
