"""What the operator's dashboard sees of a workspace: a summary row or its whole page.

Read-only and content-free: paths, hashes, counts, the ledger's (redacted) text and the
recorded trailer figures, never a file's bytes. A live workspace answers `InspectWorkspace`
in its own thread; a passivated one is described from its snapshot by `snapshot_detail`,
so looking at it does not wake it.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from live_memory.actors.runtime import Promise
from live_memory.actors.workspace_stats import prefix_tokens, workspace_stats
from live_memory.config import constants as C
from live_memory.hygiene import redact_secrets
from live_memory.memory import FileContext, LedgerFact, facts_from_state
from live_memory.workspace import WorkspaceCounters

WorkspaceActor = Any
"""The workspace shell (not imported: it imports this module); read: state, services, root."""

__all__ = ["InspectWorkspace", "fact_rows", "file_rows", "inspect_workspace", "snapshot_detail"]

Row = dict[str, object]


@dataclass(frozen=True, slots=True)
class InspectWorkspace:
    """The dashboard's look at one workspace. Not a use of it: it does not count as activity,
    so an open dashboard never keeps a workspace from passivating."""

    detail: bool
    query: str
    reply: Promise[dict[str, object]]


def inspect_workspace(actor: WorkspaceActor, message: InspectWorkspace) -> None:
    body = _summary(actor)
    if message.detail:
        body |= _detail(actor, message.query)
    message.reply.set_result(body)


def _summary(actor: WorkspaceActor) -> Row:
    state = actor.state
    window, counters = state.window, state.counters
    max_tokens = actor.services.max_context_tokens
    used = window.next_prompt_tokens(max_tokens)
    idle_s = time.monotonic() - state.last_activity
    return {
        "workspace": actor.root,
        "state": "active",
        "used_tokens": used,
        "max_tokens": max_tokens,
        "fill_pct": round(100.0 * used / max(max_tokens, 1), 1),
        "questions_answered": counters.questions_answered,
        "cache_hit_ratio": _hit_ratio(counters),
        "last_activity_at": time.time() - idle_s,
        "queue": {"pending": len(state.pending), "in_flight": len(state.in_flight)},
    }


def _hit_ratio(counters: WorkspaceCounters) -> float | str:
    return counters.cache_hit_ratio


def _detail(actor: WorkspaceActor, query: str) -> Row:
    window, settings = actor.state.window, actor.services.settings
    sizes = prefix_tokens(window)
    qa = [t for t in window.history if t.kind in ("question", "answer")]
    last_turn = int(sum(len(t.text) for t in qa[-2:]) / window.chars_per_token)
    history = max(sizes.through_history - sizes.through_frozen - last_turn, 0)
    max_tokens = actor.services.max_context_tokens
    facts, shown = fact_rows(window.ledger, query, C.DASHBOARD_MAX_FACTS)
    return {
        "stats": workspace_stats(actor),
        "layout": {
            "stable": sizes.stable,
            "frozen": max(sizes.through_frozen - sizes.stable, 0),
            "history": history,
            "last_turn": last_turn,
            "max_tokens": max_tokens,
            "threshold_tokens": int(max_tokens * settings.compaction_threshold),
            "floor_tokens": int(max_tokens * settings.compaction_floor),
        },
        "files": file_rows(window.files.values(), C.DASHBOARD_MAX_FILES),
        "files_total": len(window.files),
        "facts": facts,
        "facts_matching": shown,
        "facts_total": len(window.ledger),
        "recent_questions": list(reversed(actor.state.counters.recent_questions)),
        "compaction_log": list(reversed(actor.state.counters.compaction_log)),
    }


def fact_rows(facts: Iterable[LedgerFact], query: str, cap: int) -> tuple[list[Row], int]:
    """Facts matching `query` (case-insensitive, in text, category or a source path), at
    most `cap` of them, and how many matched in all."""
    needle = query.casefold()
    rows: list[Row] = []
    matched = 0
    for fact in facts:
        if needle and not _matches(fact, needle):
            continue
        matched += 1
        if len(rows) < cap:
            rows.append(
                {
                    "text": redact_secrets(fact.text)[0],
                    "category": fact.category,
                    "sources": [{"path": p, "sha256": h[:12]} for p, h in fact.sources],
                    "freshness": "demoted" if fact.stale else "current",
                }
            )
    return rows, matched


def _matches(fact: LedgerFact, needle: str) -> bool:
    return (
        needle in fact.text.casefold()
        or needle in fact.category.casefold()
        or any(needle in path.casefold() for path, _ in fact.sources)
    )


def file_rows(files: Iterable[FileContext], cap: int) -> list[Row]:
    """The window's files by path: state and whether bytes are held, never the bytes."""
    ordered = sorted(files, key=lambda f: f.path)[:cap]
    return [
        {
            "path": f.path,
            "sha256": f.sha256[:12],
            "size": f.size,
            "source": f.source,
            "state": f.state,
            "with_content": f.content is not None,
        }
        for f in ordered
    ]


def snapshot_detail(root: str, state: Mapping[str, Any], query: str) -> Row:
    """A passivated workspace as its snapshot left it (no file is re-hashed, nothing woken).

    Raises KeyError/TypeError/ValueError on a malformed snapshot.
    """
    counters = WorkspaceCounters.from_state(state.get("counters") or {})
    facts = facts_from_state(state)
    files = [
        FileContext(str(f["path"]), str(f["sha256"]), int(f["size"]), "read", f["state"])
        for f in state.get("files", [])
    ]
    rows, matched = fact_rows(facts, query, C.DASHBOARD_MAX_FACTS)
    return {
        "workspace": root,
        "state": "passivated",
        "questions_answered": counters.questions_answered,
        "cache_hit_ratio": _hit_ratio(counters),
        "last_activity_at": counters.last_question_at,
        "compactions": int(state.get("compactions", 0)),
        "keep_warm": {
            "pings": counters.keep_warm_pings,
            "cost_usd": round(counters.keep_warm_cost_usd, 6),
            "last_ping_at": counters.last_ping_at,
        },
        "files": file_rows(files, C.DASHBOARD_MAX_FILES),
        "files_total": len(files),
        "facts": rows,
        "facts_matching": matched,
        "facts_total": len(facts),
        "recent_questions": list(reversed(counters.recent_questions)),
        "compaction_log": list(reversed(counters.compaction_log)),
    }
