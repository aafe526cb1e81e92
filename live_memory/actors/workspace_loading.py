"""Configuring and loading a workspace: its tools and ingestor, its snapshot, its preload.

A mixin of WorkspaceActor (split from the effects it carries out, so each stays one concept):
what an incarnation builds from the services when it starts or they change, how it restores
its snapshot (a malformed one is quarantined and the workspace starts empty), the preload and
first freeze, and the stable tree built when the first question needs it.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from live_memory.actors import background
from live_memory.actors.fork import Fork
from live_memory.actors.symbol_shell import core_map_of, discard_index, open_index
from live_memory.agent import Services, resident_facts, stable_tree, store_learnt
from live_memory.config import constants as C
from live_memory.index import WorkspaceIndex
from live_memory.memory import (
    Ingestor,
    Snapshots,
    Window,
    held_bytes_cap,
    preload,
    window_from_state,
)
from live_memory.tools import Toolbox, current_sha256
from live_memory.workspace import Limits, WorkspaceCounters, WorkspaceState

__all__ = ["WorkspaceLoader"]

logger = logging.getLogger(__name__)


class WorkspaceLoader:
    root: str
    path: Path
    state: WorkspaceState
    services: Services
    toolbox: Toolbox
    ingestor: Ingestor
    store: Snapshots
    forks: dict[int, Fork]
    symbols: WorkspaceIndex | None
    map_partial: bool

    # --- configuration and loading --------------------------------------------------------
    def _configure(self, services: Services) -> None:
        self.services = services
        settings = services.settings
        if not hasattr(self, "symbols"):  # once per incarnation, released when it stops
            self.symbols = open_index(services, self.path)
            self.map_partial = False
        self.toolbox = Toolbox(
            self.path,
            secret_patterns=settings.secret_path_patterns,
            file_globs=settings.file_globs,
            max_output_chars=services.tool_output_chars,  # scaled with the window
            symbols=self.symbols,
            vendored=settings.include_vendored,
        )
        self.ingestor = Ingestor(
            self.path,
            file_globs=settings.file_globs,
            passive_ingestion=settings.passive_ingestion,
            secret_patterns=settings.secret_path_patterns,
            max_held_bytes=held_bytes_cap(
                settings.max_held_bytes, services.max_context_tokens, settings.compaction_floor
            ),
        )
        self.forks = getattr(self, "forks", {})
        if hasattr(self, "state"):
            self.state.ingestor, self.state.limits = self.ingestor, self.limits()

    def limits(self) -> Limits:
        settings = self.services.settings
        return Limits(
            concurrency=1 if settings.concurrency == "serial" else settings.max_parallel_queries,
            max_pending=settings.max_pending_questions,
            max_context_tokens=self.services.max_context_tokens,
            refreeze_delta_share=C.DELTA_REFREEZE_SHARE,
            manifest_debounce_s=C.MANIFEST_SNAPSHOT_DEBOUNCE_S,
            notify_log_max_bytes=C.NOTIFY_LOG_MAX_BYTES,
            max_ledger_facts=settings.max_ledger_facts,
            compaction_threshold=settings.compaction_threshold,
            compaction_floor=settings.compaction_floor,
        )

    def new_state(self) -> WorkspaceState:
        return WorkspaceState(self.root, self.ingestor, self.limits(), time.monotonic())

    def restore(self) -> None:
        body = self.store.load(self.path)
        if body is None:
            return
        secrets = self.services.settings.secret_path_patterns
        try:
            window = window_from_state(
                self.root, body, lambda p: current_sha256(self.path, p, secret_patterns=secrets)
            )
            counters = body.get("counters", {})
            # The store is where facts live, the snapshot the window's projection of it.
            store_learnt(self.services, self.root, window.ledger)
            fitted = self.state.restore(
                window,
                WorkspaceCounters.from_state(counters if isinstance(counters, dict) else {}),
                int(str(body.get("version", 0))),
            )
            if fitted.evicted or fitted.turns:
                logger.warning(
                    "snapshot of %s was ~%d tokens, past this window's compaction threshold "
                    "(%d tokens): fitted to ~%d by forgetting %d file(s) and %d old turn(s)",
                    self.root,
                    fitted.tokens_before,
                    self.limits().watermarks.trigger_tokens,
                    fitted.tokens_after,
                    fitted.evicted,
                    fitted.turns,
                )
            self.state.restore_fresh(body)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            logger.warning("snapshot of %s is malformed (%s); starting empty", self.root, exc)
            self.store.quarantine(self.path, repr(exc))
            self.state.restore(Window(root=self.root), WorkspaceCounters(), 0)

    def load_workspace(self) -> None:
        """Preload globs, make the ledger the store's resident set, then freeze the
        prompt's volatile block."""
        settings = self.services.settings
        window = self.state.window
        resident = resident_facts(self.services, self.root)
        if resident is not None:
            window.ledger = resident
        floor_chars = int(
            self.services.max_context_tokens * settings.compaction_floor * window.chars_per_token
        )
        preload(
            window,
            self.path,
            settings.preload_globs,
            total_cap_bytes=min(C.PRELOAD_MAX_TOTAL_BYTES, floor_chars // 2),
            secret_patterns=settings.secret_path_patterns,
            held_cap=self.ingestor.max_held_bytes,
            vendored=settings.include_vendored,
        )
        window.freeze()
        background.drain_transcripts(self)  # type: ignore[arg-type]

    def drop_index(self) -> None:
        """Delete the workspace's symbol index (`empty`); the next question opens a new one,
        whose first pass rebuilds it (`ensure_tree`). Tools go on without one until then."""
        discard_index(self.services, self.symbols)
        self.symbols = None
        self._configure(self.services)

    def ensure_tree(self) -> None:
        """Built when the first question needs it, not at activation: walking a huge root
        must not hold up notifications, stats or wipes. Rebuilt after the watcher saw HEAD
        move, or once the index's first pass completes a core map built from a partial index,
        when no fork carries the old one, together with a freeze (a new tree and core map
        change the stable prefix)."""
        state = self.state
        if self.symbols is None and self.services.stores.symbols is not None:  # dropped
            self.symbols = open_index(self.services, self.path)
            self.map_partial = False
            self._configure(self.services)
        index = self.symbols
        map_behind = self.map_partial and index is not None and index.complete
        rebuild = (state.tree_stale or map_behind) and not state.in_flight
        if not state.tree_built or rebuild:
            refreeze = state.tree_built
            core_map = core_map_of(index, first=not refreeze)
            self.map_partial = index is not None and not index.complete
            state.set_tree(stable_tree(self.path, self.services, core_map))
            if refreeze:
                state.window.freeze()
