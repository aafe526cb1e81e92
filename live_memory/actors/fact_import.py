"""An import (POST /api/import) without holding up the workspace.

The store merge of up to MAX_IMPORT_FACTS facts is SQLite and Python work of a second or more
(1-5 s for 2,000 facts on a loaded machine). It runs on the I/O loop's worker threads, in
transactions of FACT_MERGE_CHUNK_FACTS, while the workspace actor goes on answering questions,
/notify and /stats; the result comes back as one `FactsMerged` message, and only then does the
window learn the facts and the import get its reply. A wipe that lands meanwhile wins: the
import's new facts are forgotten again and the reply says so.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from concurrent.futures import Future
from typing import Any, Protocol

from live_memory.actors.message import FactsMerged, ImportFacts
from live_memory.actors.runtime import ActorDeadError, ActorRef, ActorSystem, resolve
from live_memory.agent import Services, forget_facts, store_learnt
from live_memory.config import constants as C
from live_memory.knowledge import MergeReport
from live_memory.workspace import Effect, WorkspaceState

__all__ = ["ImportHost", "facts_merged", "start_import"]

logger = logging.getLogger(__name__)


class ImportHost(Protocol):
    """What an import needs of the workspace shell (background.BackgroundHost has it)."""

    root: str
    state: WorkspaceState
    services: Services
    system: ActorSystem

    @property
    def actor_ref(self) -> ActorRef[Any]: ...

    def run(self, effects: Sequence[Effect]) -> None: ...


def start_import(host: ImportHost, message: ImportFacts) -> None:
    """Merge the facts into the store off the actor; `facts_merged` finishes the import."""
    facts = tuple(message.facts)
    marker = host.state.wiped_at_version
    if host.services.stores.facts is None or not facts:
        facts_merged(host, FactsMerged(facts, None, marker, message.reply))
        return
    ref = host.actor_ref
    merge = asyncio.to_thread(
        store_learnt, host.services, host.root, list(facts), chunk=C.FACT_MERGE_CHUNK_FACTS
    )
    future = host.system.io.submit(merge)

    def report(done: Future[MergeReport | None]) -> None:
        merged = FactsMerged(facts, _report(done), marker, message.reply)
        try:
            ref.tell(merged)
        except ActorDeadError:  # passivated meanwhile: the store has them, the next
            # incarnation's resident set comes from it
            resolve(message.reply, _reply(merged.stored, added=0, held=None, cap=None))

    future.add_done_callback(report)


def facts_merged(host: ImportHost, done: FactsMerged) -> None:
    """The store merge is done: the window learns the facts (one step), the import is told."""
    state, cap = host.state, host.services.settings.max_ledger_facts
    stored = done.stored if isinstance(done.stored, MergeReport) else None
    if state.wiped_at_version != done.wiped_at_version:
        forgotten = forget_facts(host.services, host.root, stored.new_ids if stored else [])
        logger.info(
            "import into %s overtaken by a wipe: %d fact(s) forgotten", host.root, forgotten
        )
        reply = _reply(None, added=0, held=len(state.window.ledger), cap=cap)
        reply["dropped"] = "the workspace was cleared while the import ran; nothing was kept"
        resolve(done.reply, reply)
        return
    added, effects = state.learn(list(done.facts), time.monotonic())
    host.run(effects)
    resolve(done.reply, _reply(stored, added=added, held=len(state.window.ledger), cap=cap))


def _report(done: Future[MergeReport | None]) -> MergeReport | None:
    try:
        return done.result()
    except Exception:  # the I/O loop shut down under it: the window still learns the facts
        logger.exception("import: the store merge did not run")
        return None


def _reply(
    stored: MergeReport | None, *, added: int, held: int | None, cap: int | None
) -> dict[str, object]:
    reply: dict[str, object] = {"added": added, "ledger_facts": held}
    if stored is not None:
        reply["stored"] = {
            "added": stored.added,
            "confirmed": stored.confirmed,
            "superseded": stored.superseded,
            "evicted": stored.evicted,
        }
    if held is not None and cap is not None and held >= cap:
        reply["ledger_full"] = (
            f"the ledger holds LIVE_MEMORY_MAX_LEDGER_FACTS ({cap}) facts; facts past it "
            "were not added to it"
            + (
                " but are kept in the fact store and retrieved when a question names them"
                if stored is not None
                else " (export, prune and re-import, or raise the limit)"
            )
        )
    return reply
